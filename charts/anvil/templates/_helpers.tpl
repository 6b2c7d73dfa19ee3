{{- define "anvil.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "anvil.fullname" -}}
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

{{- define "anvil.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "anvil.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: call with (dict "root" $ "component" "server"). */}}
{{- define "anvil.selector" -}}
app.kubernetes.io/name: {{ include "anvil.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "anvil.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "anvil.webhookSecretName" -}}
{{- default (printf "%s-webhook" (include "anvil.fullname" .)) .Values.webhookSecret.existingSecret -}}
{{- end -}}

{{- define "anvil.redisSecretName" -}}
{{- default (printf "%s-redis" (include "anvil.fullname" .)) .Values.redis.existingSecret -}}
{{- end -}}

{{/* True when the app needs a Redis password: always for the bundled Redis, with a Secret for an external one. */}}
{{- define "anvil.redisHasPassword" -}}
{{- if or .Values.redis.bundled .Values.redis.existingSecret -}}true{{- end -}}
{{- end -}}

{{/*
REDIS_PASSWORD from its Secret, then REDIS_URL built from it with Kubernetes' $(VAR) expansion, so the
password is never written in a manifest or in values.
*/}}
{{- define "anvil.redisEnv" -}}
{{- if include "anvil.redisHasPassword" . }}
- name: REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ include "anvil.redisSecretName" . }}
      key: {{ .Values.redis.passwordKey }}
{{- end }}
{{- if .Values.redis.bundled }}
- name: REDIS_URL
  value: {{ printf "redis://:$(REDIS_PASSWORD)@%s-redis:6379" (include "anvil.fullname" .) | quote }}
{{- else }}
{{- $url := required "redis.url is required when redis.bundled is false" .Values.redis.url | urlParse }}
- name: REDIS_URL
  {{- if include "anvil.redisHasPassword" . }}
  value: {{ printf "%s://:$(REDIS_PASSWORD)@%s%s" $url.scheme $url.host $url.path | quote }}
  {{- else }}
  value: {{ .Values.redis.url | quote }}
  {{- end }}
{{- end }}
{{- end -}}

{{- define "anvil.commonEnv" -}}
- name: LOG_LEVEL
  value: {{ .Values.config.logLevel | quote }}
- name: ANVIL_QUEUE
  value: {{ .Values.config.queue | quote }}
- name: ANVIL_PREFIX
  value: {{ .Values.config.prefix | quote }}
- name: ANVIL_METRICS_PATH
  value: {{ ternary .Values.metrics.path "off" .Values.metrics.enabled | quote }}
{{- end -}}

{{/*
Optional settings, from a list of (list "ENV_NAME" value): only those set are rendered, so the CLI's own
defaults apply to the rest. 0 is a value (kindIs, not `with`); numbers are rendered whole (toJson, where
quote would write 1.2096e+06).
*/}}
{{- define "anvil.envIfSet" -}}
{{- range $pair := . }}
{{- $value := index $pair 1 }}
{{- if and (not (kindIs "invalid" $value)) (ne (toString $value) "") }}
- name: {{ index $pair 0 }}
  value: {{ ternary $value (toJson $value) (kindIs "string" $value) | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/*
Tracing (README "Tracing"): OpenTelemetry spans over OTLP/HTTP (JSON) to the collector, with its headers (an
API key) from a Secret when tracing.headersSecret.name is set; nothing when off.
The service name stays the CLI's default (anvil-serve, anvil-worker) unless tracing.serviceNamePrefix is set.
*/}}
{{- define "anvil.tracingEnv" -}}
{{- if .root.Values.tracing.enabled }}
- name: ANVIL_TRACING
  value: otlp
- name: OTEL_EXPORTER_OTLP_ENDPOINT
  value: {{ required "tracing.endpoint is required when tracing.enabled is true" .root.Values.tracing.endpoint | quote }}
{{- with .root.Values.tracing.serviceNamePrefix }}
- name: OTEL_SERVICE_NAME
  value: {{ printf "%s-%s" . $.component | quote }}
{{- end }}
{{- $headers := .root.Values.tracing.headersSecret | default dict }}
{{- if $headers.name }}
- name: OTEL_EXPORTER_OTLP_HEADERS
  valueFrom:
    secretKeyRef:
      name: {{ $headers.name | quote }}
      key: {{ $headers.key | default "headers" | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Retention: the server stamps the job fields on each job (where not the default, which the worker applies) and checks them; the worker prunes dead letters. */}}
{{- define "anvil.serverRetentionEnv" -}}
{{- $r := .Values.config.retention | default dict -}}
{{- include "anvil.envIfSet" (list
  (list "ANVIL_RETENTION_COMPLETED_AGE_SECONDS" $r.completedAgeSeconds)
  (list "ANVIL_RETENTION_COMPLETED_COUNT" $r.completedCount)
  (list "ANVIL_RETENTION_FAILED_AGE_SECONDS" $r.failedAgeSeconds)
  (list "ANVIL_RETENTION_FAILED_COUNT" $r.failedCount)
  (list "ANVIL_RETENTION_DEAD_AGE_SECONDS" $r.deadAgeSeconds)) -}}
{{- end -}}

{{/* The worker reads the failed jobs' age only to check that dead letters outlive them. */}}
{{- define "anvil.workerSettingsEnv" -}}
{{- $r := .Values.config.retention | default dict -}}
{{- include "anvil.envIfSet" (list
  (list "ANVIL_RETENTION_FAILED_AGE_SECONDS" $r.failedAgeSeconds)
  (list "ANVIL_RETENTION_DEAD_AGE_SECONDS" $r.deadAgeSeconds)
  (list "ANVIL_LOCK_DURATION_MS" .Values.worker.lockDurationMs)
  (list "ANVIL_STALLED_INTERVAL_MS" .Values.worker.stalledIntervalMs)) -}}
{{- end -}}

{{/* Probes on the health routes; the named port "http" is the process's PORT. */}}
{{- define "anvil.probes" -}}
startupProbe:
  httpGet: { path: /health/live, port: http }
  periodSeconds: 2
  failureThreshold: 30
livenessProbe:
  httpGet: { path: /health/live, port: http }
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
readinessProbe:
  httpGet: { path: /health/ready, port: http }
  periodSeconds: 5
  timeoutSeconds: 3
  failureThreshold: 2
{{- end -}}

{{/* The read-only root filesystem still needs a writable /tmp. */}}
{{- define "anvil.tmpVolume" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
{{- end -}}
