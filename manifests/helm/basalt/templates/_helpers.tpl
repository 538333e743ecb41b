{{/*
Names. Object names are fixed (Volcano's names: volcano-scheduler, volcano-admission-service,
...), so the manifests, docs and tools that know Volcano's layout keep working; namespaced
objects live in the release namespace, cluster-scoped ones get .Values.clusterResourceSuffix.
*/}}
{{- define "basalt.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* basalt.clusterName NAME: the name of a cluster-scoped object. */}}
{{- define "basalt.clusterName" -}}
{{- printf "%s%s" .name .root.Values.clusterResourceSuffix -}}
{{- end -}}

{{- define "basalt.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels on every object. */}}
{{- define "basalt.labels" -}}
app.kubernetes.io/name: {{ include "basalt.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/part-of: basalt
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ include "basalt.chart" . }}
{{- end -}}

{{/*
basalt.componentLabels (dict "root" $ "component" "scheduler"): labels of a component's
objects: the common labels and app.kubernetes.io/component.
*/}}
{{- define "basalt.componentLabels" -}}
{{ include "basalt.labels" .root }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* basalt.podLabels: a component's Deployment and pod labels (the above plus the selector). */}}
{{- define "basalt.podLabels" -}}
{{ include "basalt.componentLabels" . }}
{{ include "basalt.selectorLabels" . }}
{{- end -}}

{{/*
basalt.selectorLabels: `app: volcano-<component>`, the selector of the Deployments before the
chart existed. A Deployment's selector is immutable, so it stays as it was: an installation
from manifests/base can be upgraded in place.
*/}}
{{- define "basalt.selectorLabels" -}}
app: {{ include "basalt.deploymentName" . }}
{{- end -}}

{{- define "basalt.deploymentName" -}}
{{- if eq .component "admission" -}}volcano-admission
{{- else if eq .component "controllers" -}}volcano-controllers
{{- else -}}volcano-scheduler
{{- end -}}
{{- end -}}

{{- define "basalt.admissionServiceName" -}}volcano-admission-service{{- end -}}

{{/* basalt.image (dict "root" $ "component" .Values.scheduler): registry/repository:tag. */}}
{{- define "basalt.image" -}}
{{- $img := .component.image -}}
{{- $registry := $img.registry | default .root.Values.image.registry -}}
{{- $tag := $img.tag | default .root.Values.image.tag | default .root.Chart.AppVersion -}}
{{- if $registry -}}
{{- printf "%s/%s:%s" $registry $img.repository $tag -}}
{{- else -}}
{{- printf "%s:%s" $img.repository $tag -}}
{{- end -}}
{{- end -}}

{{- define "basalt.webhookConfigurationNames" -}}
{{- include "basalt.clusterName" (dict "root" . "name" "volcano-admission-service-mutate") -}}
,{{- include "basalt.clusterName" (dict "root" . "name" "volcano-admission-service-validate") -}}
{{- end -}}

{{/*
basalt.podSpecCommon (dict "root" $ "component" .Values.scheduler): the pod-level settings
every component shares (pull secrets, priority class, security context, placement).
*/}}
{{- define "basalt.podSpecCommon" -}}
{{- $c := .component -}}
{{- $root := .root -}}
{{- with $root.Values.imagePullSecrets }}
imagePullSecrets:
{{- toYaml . | nindent 0 }}
{{- end }}
{{- with ($c.priorityClassName | default $root.Values.priorityClassName) }}
priorityClassName: {{ . }}
{{- end }}
{{- with ($c.podSecurityContext | default $root.Values.podSecurityContext) }}
securityContext:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.nodeSelector }}
nodeSelector:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with $c.tolerations }}
tolerations:
{{- toYaml . | nindent 0 }}
{{- end }}
{{- with $c.affinity }}
affinity:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* basalt.containerCommon: image, pull policy, resources, security context of a container. */}}
{{- define "basalt.containerCommon" -}}
{{- $c := .component -}}
{{- $root := .root -}}
image: {{ include "basalt.image" . }}
imagePullPolicy: {{ $c.image.pullPolicy | default $root.Values.image.pullPolicy }}
{{- with $c.resources }}
resources:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- with ($c.securityContext | default $root.Values.securityContext) }}
securityContext:
{{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/*
basalt.leaseName (dict "root" $ "component" "scheduler"): the Lease a component campaigns for,
passed to it with --leader-elect-resource-name and the only one its Role lets it read and
write. The binaries' own defaults: "volcano" (the scheduler name) and
vc-controller-manager-<its controllers, sorted>.
*/}}
{{- define "basalt.leaseName" -}}
{{- if eq .component "scheduler" -}}volcano
{{- else -}}
{{- $enabled := .root.Values.controllers.controllers -}}
{{- if has "*" $enabled }}{{ $enabled = list "cronjob" "gc" "job" "podgroup" "queue" }}{{ end -}}
vc-controller-manager-{{ $enabled | sortAlpha | join "-" }}
{{- end -}}
{{- end -}}

{{/* basalt.leaderElectionArgs (dict "root" $ "component" "scheduler"): flags of vc-scheduler and vc-controller-manager. */}}
{{- define "basalt.leaderElectionArgs" -}}
{{- if .root.Values.leaderElection.enabled }}
- --leader-elect=true
- --leader-elect-resource-namespace={{ .root.Release.Namespace }}
- --leader-elect-resource-name={{ include "basalt.leaseName" . }}
{{- else }}
- --leader-elect=false
{{- end }}
{{- end -}}
