{{/*
Chart name, overridable with nameOverride.
*/}}
{{- define "hf-provisioner-digitalocean.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Full name of the release's objects. All objects live in .Release.Namespace, so
releases in different namespaces never collide even with the same name.
*/}}
{{- define "hf-provisioner-digitalocean.fullname" -}}
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

{{/*
Name of the metrics Service (kept under 63 characters).
*/}}
{{- define "hf-provisioner-digitalocean.metricsName" -}}
{{- printf "%s-metrics" (include "hf-provisioner-digitalocean.fullname" . | trunc 55 | trimSuffix "-") -}}
{{- end -}}

{{/*
Name of the uninstall hook's objects: its Job, ServiceAccount, Role and RoleBinding.
*/}}
{{- define "hf-provisioner-digitalocean.drainName" -}}
{{- printf "%s-drain" (include "hf-provisioner-digitalocean.fullname" . | trunc 57 | trimSuffix "-") -}}
{{- end -}}

{{/*
Labels of the uninstall hook's objects and pod. Its pod must not match the
Deployment's selector (the drain waits for those pods to be gone) nor the
metrics Service's, hence a name of its own.
*/}}
{{- define "hf-provisioner-digitalocean.drainLabels" -}}
helm.sh/chart: {{ include "hf-provisioner-digitalocean.chart" . }}
app.kubernetes.io/name: {{ printf "%s-drain" (include "hf-provisioner-digitalocean.name" .) | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: drain
app.kubernetes.io/part-of: hobbyfarm
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
Annotations that make an object part of the pre-delete hook: made at
`helm uninstall`, before anything else goes, and deleted once the hook
succeeded (a failed hook's Job stays, for its log). weight orders them.
*/}}
{{- define "hf-provisioner-digitalocean.drainHook" -}}
helm.sh/hook: pre-delete
helm.sh/hook-weight: {{ .weight | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end -}}

{{/*
Name of the Grafana dashboard ConfigMap (kept under 63 characters).
*/}}
{{- define "hf-provisioner-digitalocean.dashboardName" -}}
{{- printf "%s-dashboard" (include "hf-provisioner-digitalocean.fullname" . | trunc 53 | trimSuffix "-") -}}
{{- end -}}

{{/*
PromQL label matchers that pick this release's series in the alerts: by default
the namespace and service labels a ServiceMonitor scrape of the metrics Service carries.
*/}}
{{- define "hf-provisioner-digitalocean.alertSelector" -}}
{{- if .Values.prometheusRule.selector -}}
{{- .Values.prometheusRule.selector -}}
{{- else -}}
{{- printf "namespace=%q,service=%q" .Release.Namespace (include "hf-provisioner-digitalocean.metricsName" .) -}}
{{- end -}}
{{- end -}}

{{/*
chart label value.
*/}}
{{- define "hf-provisioner-digitalocean.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/*
Labels that select the controller pods. Never change them: a Deployment's selector is immutable.
*/}}
{{- define "hf-provisioner-digitalocean.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hf-provisioner-digitalocean.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/*
Labels on every object.
*/}}
{{- define "hf-provisioner-digitalocean.labels" -}}
helm.sh/chart: {{ include "hf-provisioner-digitalocean.chart" . }}
{{ include "hf-provisioner-digitalocean.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/component: controller
app.kubernetes.io/part-of: hobbyfarm
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/*
Controller image reference; the tag defaults to the chart's appVersion.
*/}}
{{- define "hf-provisioner-digitalocean.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/*
Whether the container listens on metrics.port (for metrics, probes or both).
*/}}
{{- define "hf-provisioner-digitalocean.listens" -}}
{{- if or .Values.metrics.enabled .Values.probes.enabled -}}true{{- end -}}
{{- end -}}

{{/*
Combinations of values that the schema cannot express; fails rendering with a clear message.
*/}}
{{- define "hf-provisioner-digitalocean.validate" -}}
{{- if and (gt (int .Values.replicas) 1) (not .Values.leaderElection.enabled) -}}
{{- fail "replicas > 1 needs leaderElection.enabled=true: without a leader, the replicas would provision every VM several times" -}}
{{- end -}}
{{- if eq .Values.leaderElection.leaseName "controller-manager" -}}
{{- fail "leaderElection.leaseName must not be controller-manager: that is Gargantua's own leader-election Lease" -}}
{{- end -}}
{{- if and .Values.metrics.serviceMonitor.enabled (not .Values.metrics.enabled) -}}
{{- fail "metrics.serviceMonitor.enabled=true needs metrics.enabled=true" -}}
{{- end -}}
{{- if and .Values.prometheusRule.enabled (not .Values.metrics.enabled) -}}
{{- fail "prometheusRule.enabled=true needs metrics.enabled=true: without metrics every alert would misfire" -}}
{{- end -}}
{{- if and .Values.grafanaDashboard.enabled (not .Values.metrics.enabled) -}}
{{- fail "grafanaDashboard.enabled=true needs metrics.enabled=true: the dashboard shows the controller's metrics" -}}
{{- end -}}
{{- if regexMatch "^(0+(\\.0+)?(ns|us|µs|ms|s|m|h))+$" (toString .Values.configErrorGrace) -}}
{{- fail "configErrorGrace must be more than zero: the controller refuses --config-error-grace=0" -}}
{{- end -}}
{{- end -}}
