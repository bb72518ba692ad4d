#!/usr/bin/env bash
# Provision the real servers that tests/live starts on loopback.
#
# Idempotent and fast when warm: every step checks first and does nothing when its
# result is already there. Downloads and builds are cached under
# ${TRIAGE_CACHE:-$HOME/.cache/triage}; nothing is fetched except through apt-get,
# mvn and the go command (the package registries this project may use).
#
#   tests/services/provision.sh              # everything
#   tests/services/provision.sh apt es kube  # only some components
#
# Components:
#   apt   prometheus + promtool, etcd, PostgreSQL, a JDK 17 and Maven (Debian packages)
#   es    an Elasticsearch node assembled from Maven Central artifacts (needs apt)
#   kube  kube-apiserver built from k8s.io/kubernetes through the Go module proxy
#
# Prints one line per component with the seconds it took, on stderr.
set -euo pipefail

CACHE="${TRIAGE_CACHE:-$HOME/.cache/triage}"
KUBE_VERSION="${TRIAGE_KUBE_VERSION:-v1.37.2}"
ES_VERSION="${TRIAGE_ES_VERSION:-8.19.21}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
: "${CACHE:?}" "${HERE:?}"

mkdir -p "$CACHE/bin"

log() { printf 'provision: %s\n' "$*" >&2; }

timed() {
    local name="$1" t0 ms
    shift
    t0=$(date +%s%N)
    "$@"
    ms=$((($(date +%s%N) - t0) / 1000000))
    log "$(printf '%-5s done in %d.%01ds' "$name" $((ms / 1000)) $((ms % 1000 / 100)))"
}

# --------------------------------------------------------------------------- apt
APT_PACKAGES=(prometheus etcd-server postgresql openjdk-17-jdk-headless maven openssl procps)

apt_missing() {
    local p
    for p in "${APT_PACKAGES[@]}"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' \
            || echo "$p"
    done
}

provision_apt() {
    local missing
    missing="$(apt_missing | tr '\n' ' ')"
    [[ -z ${missing// /} ]] && return 0
    if [[ $(id -u) -ne 0 ]]; then
        log "missing Debian packages: $missing(run this script as root)"
        return 1
    fi
    log "installing: $missing"
    # The postinst scripts would start system services: prometheus on :9090, etcd on
    # :2379, a postgres cluster on :5432. The tests start their own on free ports, so
    # forbid service starts during the install (policy-rc.d exit 101 = "not allowed").
    local policy=/usr/sbin/policy-rc.d ours=0
    if [[ ! -e $policy ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod 755 "$policy"
        ours=1
    fi
    local rc=0
    {
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        # shellcheck disable=SC2086
        apt-get install -y -qq --no-install-recommends $missing >/dev/null
    } || rc=$?
    [[ $ours -eq 1 ]] && rm -f "$policy"
    [[ $rc -eq 0 ]] || return "$rc"
    # Where systemd runs (not in a container), keep the units from starting at boot.
    if command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]; then
        systemctl disable --now prometheus etcd postgresql >/dev/null 2>&1 || true
    fi
}

# --------------------------------------------------------------------------- es
# Elastic publishes the node (org.elasticsearch:elasticsearch) and its HTTP/transport
# module (org.elasticsearch.plugin:transport-netty4) on Maven Central, but not the
# distribution's launcher. We lay the jars out as the distribution does (lib/ on the
# module path, modules/transport-netty4/ loaded by the node's plugin loader) and add a
# tiny launcher and a module that serves GET / (see es/*.java).
es_java_home() {
    local j
    for j in "${TRIAGE_ES_JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-amd64 "${JAVA_HOME:-}"; do
        if [[ -n $j && -x $j/bin/javac ]]; then
            echo "$j"
            return 0
        fi
    done
    return 1
}

write_es_pom() {
    cat <<POM
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>triage.local</groupId><artifactId>es-node</artifactId><version>1</version>
  <dependencies>
    <dependency><groupId>org.elasticsearch</groupId><artifactId>elasticsearch</artifactId>
      <version>$ES_VERSION</version></dependency>
    <dependency><groupId>org.elasticsearch.plugin</groupId><artifactId>transport-netty4</artifactId>
      <version>$ES_VERSION</version></dependency>
  </dependencies>
</project>
POM
}

write_root_descriptor() {
    cat <<DESC
description=GET / and HEAD / for the Triage test node (rest-root is not on Maven Central)
version=1.0
name=triage-root
classname=triage.es.TriageRootPlugin
java.version=17
elasticsearch.version=$ES_VERSION
DESC
}

provision_es() (
    local home="$CACHE/elasticsearch-$ES_VERSION" stamp jhome
    stamp="$ES_VERSION $(cat "$HERE"/es/*.java | sha256sum | cut -c1-16)"
    if [[ -f $home/.complete && "$(cat "$home/.complete")" == "$stamp" ]]; then
        return 0
    fi
    jhome="$(es_java_home)" || { log "no JDK 17 with javac found (run: $0 apt)"; return 1; }
    log "assembling Elasticsearch $ES_VERSION from Maven Central"
    local tmp="$home.tmp" netty="$home.tmp/modules/transport-netty4"
    rm -rf "$tmp"
    mkdir -p "$tmp/jars" "$tmp/lib" "$netty" "$tmp/modules/triage-root" "$tmp/launcher" "$tmp/classes"
    write_es_pom >"$tmp/pom.xml"
    if ! JAVA_HOME="$jhome" mvn -q -B -f "$tmp/pom.xml" -Dmaven.repo.local="$CACHE/m2" \
        dependency:copy-dependencies -DoutputDirectory="$tmp/jars" >"$tmp/mvn.log" 2>&1; then
        cat "$tmp/mvn.log" >&2
        return 1
    fi
    local jar
    for jar in "$tmp"/jars/*.jar; do
        case "$(basename "$jar")" in
            netty-* | transport-netty4-*) mv "$jar" "$netty/" ;;
            *) mv "$jar" "$tmp/lib/" ;;
        esac
    done
    # The module's descriptor ships inside its jar; the node reads it from the directory.
    local descriptor=META-INF/es-plugins/transport-netty4/plugin-descriptor.properties
    (cd "$tmp/classes" && "$jhome/bin/jar" xf "$netty/transport-netty4-$ES_VERSION.jar" "$descriptor")
    mv "$tmp/classes/$descriptor" "$netty/"
    rm -rf "$tmp/classes/META-INF"
    "$jhome/bin/javac" --release 17 -nowarn -cp "$tmp/lib/*" -d "$tmp/launcher" "$HERE/es/TriageEsNode.java"
    "$jhome/bin/javac" --release 17 -nowarn -cp "$tmp/lib/*" -d "$tmp/classes" "$HERE/es/TriageRootPlugin.java"
    "$jhome/bin/jar" cf "$tmp/modules/triage-root/triage-root.jar" -C "$tmp/classes" .
    write_root_descriptor >"$tmp/modules/triage-root/plugin-descriptor.properties"
    rm -rf "$tmp/classes" "$tmp/jars"
    echo "$jhome" >"$tmp/java-home"
    echo "$stamp" >"$tmp/.complete"
    rm -rf "$home"
    mv "$tmp" "$home"
)

# --------------------------------------------------------------------------- kube
# kube-apiserver is not packaged by Debian. We build it from the k8s.io/kubernetes
# module. That module's go.mod points its staging modules (k8s.io/api, client-go, ...)
# at ./staging/src with replace directives, which Go ignores in a dependency, so our
# throwaway main module repeats them, pointing at the published v0.X.Y tags instead.
write_kube_gomod() {
    local upstream="$1" staging="$2"
    echo "module triage.local/kubeapiserver"
    echo
    grep -m1 '^go ' "$upstream"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    echo "replace ("
    sed -n 's#^\s*\(k8s\.io/[a-z0-9-]*\) => \./staging/src/k8s\.io/.*$#\t\1 => \1 '"$staging"'#p' "$upstream"
    echo ")"
}

provision_kube() (
    local out="$CACHE/bin/kube-apiserver-$KUBE_VERSION"
    if [[ -x $out ]]; then
        ln -sfn "$(basename "$out")" "$CACHE/bin/kube-apiserver"
        return 0
    fi
    command -v go >/dev/null || { log "go is not installed"; return 1; }
    local staging="v0.${KUBE_VERSION#v1.}" work="$CACHE/build/kube-apiserver-$KUBE_VERSION"
    # The build cache (~3 GB) serves this one build only: it lives in the work
    # directory and goes with it. The module cache stays, for a rebuild at another version.
    export GOMODCACHE="$CACHE/go/mod" GOCACHE="$work/gocache"
    export GOFLAGS="-trimpath -mod=mod -buildvcs=false" CGO_ENABLED=0
    mkdir -p "$work"
    cd "$work"
    log "building kube-apiserver $KUBE_VERSION (about 10 minutes on 2 cores)"
    local upstream
    upstream="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
    write_kube_gomod "$upstream" "$staging" >go.mod
    printf 'package tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >tools.go
    go mod tidy 2>"$work/tidy.log" || { cat "$work/tidy.log" >&2; return 1; }
    local ver="k8s.io/component-base/version" major minor
    major="${KUBE_VERSION#v}" && major="${major%%.*}"
    minor="${KUBE_VERSION#v*.}" && minor="${minor%%.*}"
    go build -ldflags "-s -w -X $ver.gitVersion=$KUBE_VERSION -X $ver.gitMajor=$major \
        -X $ver.gitMinor=$minor -X $ver.gitTreeState=clean" \
        -o "$out.tmp" k8s.io/kubernetes/cmd/kube-apiserver
    mv "$out.tmp" "$out"
    ln -sfn "$(basename "$out")" "$CACHE/bin/kube-apiserver"
    cd /
    chmod -R u+w "$work"
    rm -rf "$work"
)

# --------------------------------------------------------------------------- main
main() {
    local components=("$@") c
    [[ ${#components[@]} -eq 0 ]] && components=(apt es kube)
    for c in "${components[@]}"; do
        case "$c" in
            apt) timed apt provision_apt ;;
            es) timed es provision_es ;;
            kube) timed kube provision_kube ;;
            *) log "unknown component: $c (expected apt, es or kube)"; return 2 ;;
        esac
    done
}

main "$@"
