{{/* Names, labels and the pieces several templates share. */}}

{{- define "triage.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "triage.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "triage.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "triage.selectorLabels" -}}
app.kubernetes.io/name: {{ include "triage.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "triage.labels" -}}
helm.sh/chart: {{ include "triage.chart" . }}
{{ include "triage.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: triage
{{- end -}}

{{- define "triage.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "triage.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "triage.image" -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* Secret names: the one the user manages, or the one this chart creates. */}}
{{- define "triage.slackSecret" -}}
{{- default (printf "%s-slack" (include "triage.fullname" .)) .Values.slack.existingSecret -}}
{{- end -}}

{{- define "triage.openaiSecret" -}}
{{- default (printf "%s-openai" (include "triage.fullname" .)) .Values.openai.existingSecret -}}
{{- end -}}

{{- define "triage.databaseSecret" -}}
{{- default (printf "%s-database" (include "triage.fullname" .)) .Values.database.existingSecret -}}
{{- end -}}

{{/* Several replicas: spread them over nodes and keep one through voluntary disruptions. */}}
{{- define "triage.replicated" -}}
{{- if gt (int .Values.replicaCount) 1 }}true{{ end -}}
{{- end -}}

{{- define "triage.elasticsearchSecret" -}}
{{- default (printf "%s-elasticsearch" (include "triage.fullname" .)) .Values.elasticsearch.existingSecret -}}
{{- end -}}

{{/* Whether the chart has OpenAI or Elasticsearch credentials to hand to the bot at all. */}}
{{- define "triage.openaiEnabled" -}}
{{- if or .Values.openai.existingSecret .Values.openai.apiKey -}}true{{- end -}}
{{- end -}}

{{- define "triage.elasticsearchCredentials" -}}
{{- $es := .Values.elasticsearch -}}
{{- if or $es.existingSecret $es.apiKey $es.username $es.password -}}true{{- end -}}
{{- end -}}

{{- define "triage.prometheusSecret" -}}
{{- default (printf "%s-prometheus" (include "triage.fullname" .)) .Values.prometheus.existingSecret -}}
{{- end -}}

{{- define "triage.prometheusCredentials" -}}
{{- $p := .Values.prometheus -}}
{{- if or $p.existingSecret $p.token $p.username $p.password -}}true{{- end -}}
{{- end -}}

{{/* A Service exists for HTTP mode (Slack's events) and for metrics. */}}
{{- define "triage.serviceEnabled" -}}
{{- if or (eq .Values.mode "http") .Values.metrics.enabled -}}true{{- end -}}
{{- end -}}

{{/*
The read-only rules the tools need, from tools/sources/kube_api.py (tests/helm/test_rbac.py
fails if the two differ). "namespaced" is what a Role may hold; "cluster" is the rest.
*/}}
{{- define "triage.rules.namespaced" -}}
- apiGroups: [""]
  resources: [configmaps, endpoints, events, limitranges, persistentvolumeclaims, pods, resourcequotas, services]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [pods/log]
  verbs: [get]
- apiGroups: [apps]
  resources: [daemonsets, deployments, replicasets, statefulsets]
  verbs: [get, list, watch]
- apiGroups: [autoscaling]
  resources: [horizontalpodautoscalers]
  verbs: [get, list, watch]
- apiGroups: [batch]
  resources: [cronjobs, jobs]
  verbs: [get, list, watch]
- apiGroups: [networking.k8s.io]
  resources: [ingresses, networkpolicies]
  verbs: [get, list, watch]
{{- end -}}

{{- define "triage.rules.cluster" -}}
- apiGroups: [""]
  resources: [namespaces, nodes]
  verbs: [get, list, watch]
- apiGroups: [storage.k8s.io]
  resources: [storageclasses]
  verbs: [get, list, watch]
{{- end -}}

{{/* Checks that JSON schema cannot say clearly; each failure names the value to change. */}}
{{- define "triage.validate" -}}
{{- $v := .Values -}}
{{- if and (eq $v.rbac.scope "namespaces") (empty $v.rbac.namespaces) -}}
{{- fail "rbac.scope is \"namespaces\" but rbac.namespaces is empty: list the namespaces Triage may read, or use rbac.scope=cluster" -}}
{{- end -}}
{{- if and $v.ingress.enabled (ne $v.mode "http") -}}
{{- fail "ingress.enabled needs mode=http: in Socket Mode Slack is reached over an outbound WebSocket and nothing is exposed" -}}
{{- end -}}
{{- if and $v.ingress.enabled (not $v.ingress.host) -}}
{{- fail "ingress.enabled needs ingress.host: the public host name Slack posts events to" -}}
{{- end -}}
{{- if and $v.metrics.serviceMonitor.enabled (not $v.metrics.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled needs metrics.enabled=true" -}}
{{- end -}}
{{- $pdb := $v.podDisruptionBudget -}}
{{- if and $pdb.enabled (not (kindIs "invalid" $pdb.minAvailable)) (not (kindIs "invalid" $pdb.maxUnavailable)) -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both" -}}
{{- end -}}
{{- if and $v.openai.baseUrl (not $v.openai.apiKey) (not $v.openai.existingSecret) -}}
{{- fail "openai.baseUrl needs openai.apiKey (any non-empty value for an endpoint without auth) or openai.existingSecret; without a key the bot runs its offline analyzer" -}}
{{- end -}}
{{- range $name, $_ := $v.config.extra -}}
{{- if regexMatch "(?i)(TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|CREDENTIAL)" $name -}}
{{- fail (printf "config.extra.%s looks like a credential and would land in a ConfigMap: pass it from a Secret with extraEnv (valueFrom.secretKeyRef)" $name) -}}
{{- end -}}
{{- end -}}
{{- end -}}
