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
Labels that select the controller pods. Never change them: a Deployment's selector is
immutable, and these are the alpha chart's too, so `helm upgrade` of an alpha release
updates its Deployment in place.
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
Values of the alpha chart, which this chart replaces under the same release name and
chart path, so an alpha release's values file meets this chart. Its keys this chart
has with the same meaning pass (a map such as `podSecurityContext: {}` merges over
the defaults here). The others are refused, all in one message, one line each naming
what to set instead; the schema admits them (definitions/alphaValue) so that this
message, not a bare schema error, is what the user reads. They are refused whatever
their value: a copied alpha values file has to change for its image anyway, and once
fixed it says only what this chart does.
*/}}
{{- define "hf-provisioner-digitalocean.alphaValues" -}}
{{- $v := .Values -}}
{{- $sa := default dict $v.serviceAccount -}}
{{- $fullname := include "hf-provisioner-digitalocean.fullname" . -}}
{{- $lines := list -}}
{{- /* index gives nil for a key that is absent or null; both mean unset. */ -}}
{{- if not (kindIs "invalid" (index $v "replicaCount")) -}}
{{- $lines = append $lines (printf "replicaCount: renamed; set replicas: %v instead (more than 1 adds standbys: one leader works at a time)" $v.replicaCount) -}}
{{- end -}}
{{- if not (kindIs "invalid" (index $v "autoscaling")) -}}
{{- $lines = append $lines "autoscaling: not supported, whatever its value: one leader does all the work and other replicas stand by, so more pods add no capacity; remove it (replicas sets the pod count)" -}}
{{- end -}}
{{- if not (kindIs "invalid" (index $sa "create")) -}}
{{- $lines = append $lines (printf "serviceAccount.create: this chart always creates its ServiceAccount, %s, bound to the Role the controller needs; remove it" $fullname) -}}
{{- end -}}
{{- if not (kindIs "invalid" (index $sa "name")) -}}
{{- $lines = append $lines (printf "serviceAccount.name: the ServiceAccount is named like the release's other objects, %s; remove it" $fullname) -}}
{{- end -}}
{{- /* The alpha published its images to Docker Hub only; this chart's releases publish to ghcr.io.
The alpha's image has no entrypoint for this chart's args and needs rights this Role lacks. */ -}}
{{- if regexMatch "^((docker\\.io|index\\.docker\\.io|registry-1\\.docker\\.io)/)?hobbyfarm/hf-provisioner-digitalocean$" $v.image.repository -}}
{{- $lines = append $lines (printf "image.repository: %s holds the alpha's images, which cannot run in this chart; remove it (the default is ghcr.io/hobbyfarm/hf-provisioner-digitalocean) or name your mirror of that" $v.image.repository) -}}
{{- end -}}
{{- /* The alpha's one release; this chart's images are tagged X.Y.Z. */ -}}
{{- if eq $v.image.tag "v0.0.1" -}}
{{- $lines = append $lines (printf "image.tag: v0.0.1 is the alpha's release, which cannot run in this chart; remove it (the tag defaults to the chart's appVersion, %s)" .Chart.AppVersion) -}}
{{- end -}}
{{- if $lines -}}
{{- fail (printf "values of the alpha chart this chart refuses, one line each; change them in your values file (a helm upgrade given no values reuses the release's last ones):\n  %s" (join "\n  " $lines)) -}}
{{- end -}}
{{- end -}}

{{/*
Combinations of values that the schema cannot express; fails rendering with a clear message.
*/}}
{{- define "hf-provisioner-digitalocean.validate" -}}
{{- include "hf-provisioner-digitalocean.alphaValues" . -}}
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
