{{/* Object names: the release name, or release-chart when it does not contain the chart name. */}}
{{- define "crc.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* The selector label; the kustomize manifests in deploy/ use the same. */}}
{{- define "crc.selector" -}}
app.kubernetes.io/name: {{ include "crc.fullname" . }}
{{- end -}}

{{/* Every object's labels: the selector (unchanged across upgrades: a Deployment's selector is
immutable) and the standard instance, version, managed-by and chart labels. */}}
{{- define "crc.labels" -}}
{{ include "crc.selector" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}
