// Serves GET / and HEAD / on the test Elasticsearch node.
//
// In the distribution these endpoints come from the rest-root module, which Elastic
// does not publish to Maven Central. Clients call them: the Python client's info()
// and ping(), and health checks. This plugin answers them with the same document
// (node name, cluster name and UUID, version block, tagline), read from the live
// cluster state, so clients see what a real node would tell them.
//
// Compiled into <es home>/modules/triage-root by tests/services/provision.sh.
package triage.es;

import java.util.Collection;
import java.util.List;
import java.util.function.Predicate;
import java.util.function.Supplier;

import org.elasticsearch.Build;
import org.elasticsearch.action.admin.cluster.state.ClusterStateAction;
import org.elasticsearch.action.admin.cluster.state.ClusterStateRequest;
import org.elasticsearch.action.admin.cluster.state.ClusterStateResponse;
import org.elasticsearch.client.internal.node.NodeClient;
import org.elasticsearch.cluster.metadata.IndexNameExpressionResolver;
import org.elasticsearch.cluster.node.DiscoveryNodes;
import org.elasticsearch.common.io.stream.NamedWriteableRegistry;
import org.elasticsearch.common.settings.ClusterSettings;
import org.elasticsearch.common.settings.IndexScopedSettings;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.common.settings.SettingsFilter;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.features.NodeFeature;
import org.elasticsearch.index.IndexVersion;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.ActionPlugin;
import org.elasticsearch.plugins.Plugin;
import org.elasticsearch.rest.BaseRestHandler;
import org.elasticsearch.rest.RestController;
import org.elasticsearch.rest.RestHandler;
import org.elasticsearch.rest.RestRequest;
import org.elasticsearch.rest.RestResponse;
import org.elasticsearch.rest.RestStatus;
import org.elasticsearch.rest.action.RestBuilderListener;
import org.elasticsearch.xcontent.XContentBuilder;

public final class TriageRootPlugin extends Plugin implements ActionPlugin {

    @Override
    public Collection<RestHandler> getRestHandlers(
            Settings settings,
            NamedWriteableRegistry namedWriteableRegistry,
            RestController restController,
            ClusterSettings clusterSettings,
            IndexScopedSettings indexScopedSettings,
            SettingsFilter settingsFilter,
            IndexNameExpressionResolver indexNameExpressionResolver,
            Supplier<DiscoveryNodes> nodesInCluster,
            Predicate<NodeFeature> clusterSupportsFeature) {
        return List.of(new RootHandler(Node.NODE_NAME_SETTING.get(settings)));
    }

    static final class RootHandler extends BaseRestHandler {
        private final String nodeName;

        RootHandler(String nodeName) {
            this.nodeName = nodeName;
        }

        @Override
        public String getName() {
            return "triage_root_action";
        }

        @Override
        public List<Route> routes() {
            return List.of(new Route(RestRequest.Method.GET, "/"), new Route(RestRequest.Method.HEAD, "/"));
        }

        @Override
        protected RestChannelConsumer prepareRequest(RestRequest request, NodeClient client) {
            ClusterStateRequest stateRequest = new ClusterStateRequest(TimeValue.timeValueSeconds(30));
            stateRequest.clear().metadata(true);
            return channel -> client.execute(
                    ClusterStateAction.INSTANCE,
                    stateRequest,
                    new RestBuilderListener<ClusterStateResponse>(channel) {
                        @Override
                        public RestResponse buildResponse(ClusterStateResponse response, XContentBuilder builder)
                                throws Exception {
                            Build build = Build.current();
                            builder.startObject();
                            builder.field("name", nodeName);
                            builder.field("cluster_name", response.getClusterName().value());
                            builder.field("cluster_uuid", response.getState().metadata().clusterUUID());
                            builder.startObject("version");
                            builder.field("number", build.qualifiedVersion());
                            builder.field("build_flavor", build.flavor());
                            builder.field("build_type", build.type().displayName());
                            builder.field("build_hash", build.hash());
                            builder.field("build_date", build.date());
                            builder.field("build_snapshot", build.isSnapshot());
                            builder.field("lucene_version", IndexVersion.current().luceneVersion().toString());
                            builder.field("minimum_wire_compatibility_version", build.minWireCompatVersion());
                            builder.field("minimum_index_compatibility_version", build.minIndexCompatVersion());
                            builder.endObject();
                            builder.field("tagline", "You Know, for Search");
                            builder.endObject();
                            return new RestResponse(RestStatus.OK, builder);
                        }
                    });
        }
    }
}
