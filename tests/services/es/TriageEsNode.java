// Starts one real Elasticsearch node from the jars that Maven Central publishes.
//
// Elastic's distribution starts the server through a CLI that launches a second JVM
// and hands it its arguments as a binary blob on stdin; that CLI and its launcher are
// not on Maven Central. The node itself is: org.elasticsearch:elasticsearch holds
// org.elasticsearch.node.Node, and org.elasticsearch.plugin:transport-netty4 the HTTP
// and transport layer, which the node loads from <es.path.home>/modules like the
// distribution does. So this class does what the distribution's bootstrap does that
// matters for a loopback test node: read elasticsearch.yml from -Des.path.conf
// (default <home>/config), set up logging, load the modules, build the Node and
// start it, and close it on SIGTERM.
//
// It must run with lib/ on the module path (--module-path <home>/lib
// --add-modules=ALL-MODULE-PATH), as the distribution does: the plugin loader
// refuses a server that is not the named module org.elasticsearch.server.
// The production bootstrap checks (heap, mmap count, file descriptors) are skipped;
// they only apply to a node bound to a non-loopback address anyway.
//
// Compiled by tests/services/provision.sh into the cache; started by
// tests/services/elasticsearch.py.

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

import org.elasticsearch.common.logging.LogConfigurator;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.env.Environment;
import org.elasticsearch.node.InternalSettingsPreparer;
import org.elasticsearch.node.Node;
import org.elasticsearch.plugins.PluginBundle;
import org.elasticsearch.plugins.PluginsLoader;

public final class TriageEsNode {
    private TriageEsNode() {}

    public static void main(String[] args) throws Exception {
        Path home = Path.of(System.getProperty("es.path.home")).toAbsolutePath();
        String conf = System.getProperty("es.path.conf");
        Path config = conf == null ? home.resolve("config") : Path.of(conf).toAbsolutePath();
        Settings input = Settings.builder().put("path.home", home.toString()).build();
        LogConfigurator.registerErrorListener();
        LogConfigurator.configureESLogging();
        Environment env = InternalSettingsPreparer.prepareEnvironment(
                input, Map.of(), config, () -> "triage-es");
        LogConfigurator.configureWithoutConfig(env.settings());
        LogConfigurator.setNodeName(Node.NODE_NAME_SETTING.get(env.settings()));

        Set<PluginBundle> modules = PluginsLoader.loadModulesBundles(env.modulesDir());
        PluginsLoader loader = PluginsLoader.createPluginsLoader(modules, Set.of(), Map.of());
        Node node = new Node(env, loader);

        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                node.prepareForClose();
                node.close();
            } catch (Exception e) {
                e.printStackTrace();
            } finally {
                stopped.countDown();
            }
        }, "triage-es-shutdown"));
        node.start();
        System.err.println("triage-es: node started");
        stopped.await();
    }
}
