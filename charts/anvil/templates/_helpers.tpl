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
{{- $repository := required "image.repository is required: Anvil's image is not published; build it from the repository's Dockerfile and push it to your registry, or name your image built FROM it (docs/deployment.md: Container)" .Values.image.repository -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{/* The bundled Redis's image, by digest when one is given (values.yaml says how to bump it). */}}
{{- define "anvil.redisImage" -}}
{{- $image := .Values.redis.image -}}
{{- printf "%s:%s" $image.repository $image.tag -}}{{- with $image.digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
The pods' topologySpreadConstraints: the component's own list, each without a labelSelector given the
component's; empty, a soft spread (ScheduleAnyway: never blocks scheduling) across nodes and zones.
Call with (dict "root" $ "component" "server").
*/}}
{{- define "anvil.topologySpread" -}}
{{- $selector := dict "matchLabels" (include "anvil.selector" . | fromYaml) -}}
{{- $constraints := list -}}
{{- range (index .root.Values .component).topologySpreadConstraints -}}
{{- $constraints = append $constraints (merge (deepCopy .) (dict "labelSelector" $selector)) -}}
{{- else -}}
{{- range $key := list "kubernetes.io/hostname" "topology.kubernetes.io/zone" -}}
{{- $constraints = append $constraints (dict "maxSkew" 1 "topologyKey" $key "whenUnsatisfiable" "ScheduleAnyway" "labelSelector" $selector) -}}
{{- end -}}
{{- end -}}
{{- toYaml $constraints -}}
{{- end -}}

{{- define "anvil.webhookSecretName" -}}
{{- default (printf "%s-webhook" (include "anvil.fullname" .)) .Values.webhookSecret.existingSecret -}}
{{- end -}}

{{/* Never generated: a random password would change on every render (helm template, Argo CD) and restarted pods would stop matching the running Redis. */}}
{{- define "anvil.redisSecretName" -}}
{{- required "redis.existingSecret is required for the bundled Redis: a Secret you create with the key redis-password, e.g. kubectl create secret generic anvil-redis --from-literal=redis-password=\"$(openssl rand -hex 24)\" (the chart makes up no password, so every render is the same)" .Values.redis.existingSecret -}}
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
Tracing (docs/operations.md "Tracing"): OpenTelemetry spans over OTLP/HTTP (JSON) to the collector, with its headers (an
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

{{/* The server's own optional settings. */}}
{{- define "anvil.serverSettingsEnv" -}}
{{- include "anvil.envIfSet" (list
  (list "ANVIL_REQUEST_TIMEOUT_MS" .Values.server.requestTimeoutMs)
  (list "ANVIL_MAX_IN_FLIGHT_BYTES" .Values.server.maxInFlightBytes)) -}}
{{- end -}}

{{/* The worker reads the failed jobs' age only to check that dead letters outlive them. */}}
{{- define "anvil.workerSettingsEnv" -}}
{{- $r := .Values.config.retention | default dict -}}
{{- include "anvil.envIfSet" (list
  (list "ANVIL_RETENTION_FAILED_AGE_SECONDS" $r.failedAgeSeconds)
  (list "ANVIL_RETENTION_DEAD_AGE_SECONDS" $r.deadAgeSeconds)
  (list "ANVIL_LOCK_DURATION_MS" .Values.worker.lockDurationMs)
  (list "ANVIL_STALLED_INTERVAL_MS" .Values.worker.stalledIntervalMs)
  (list "ANVIL_JOURNAL_SUBJECT_PATH" .Values.worker.journalSubjectPath)) -}}
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

{{/*
Environment variables from keys of existing Secrets: a dict of NAME → { name: <Secret>, key: <key> }, rendered
in name order; `where` names the dict in messages. The one way this chart puts a secret in a container, so
none is ever written in a manifest: the sources' ${NAME} references use it, and so can a database URL or an
admin token, e.g. (dict "where" "database" "env" (dict "DATABASE_URL" (dict "name" $secret "key" $key))).
*/}}
{{- define "anvil.secretEnv" -}}
{{- range $name, $ref := .env }}
{{- if not (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" $name) }}
{{- fail (printf "%s.%s: not a valid environment variable name (letters, digits and _, not first a digit)" $.where $name) }}
{{- end }}
{{- if or (not (kindIs "map" $ref)) (not $ref.name) (not $ref.key) }}
{{- fail (printf "%s.%s needs { name: <Secret>, key: <key in it> }" $.where $name) }}
{{- end }}
- name: {{ $name }}
  valueFrom:
    secretKeyRef:
      name: {{ $ref.name | quote }}
      key: {{ $ref.key | quote }}
{{- end }}
{{- end -}}

{{/*
The sources, checked: every secret a "${NAME}" reference, every NAME in sourceSecrets, so no secret can land in
the ConfigMap. Renders nothing; fails with one line.
*/}}
{{- define "anvil.checkSources" -}}
{{- range $i, $source := .Values.sources }}
{{- if not (kindIs "map" $source) }}
{{- fail (printf "sources[%d] must be a source: { path, provider, secrets, … } (docs/providers.md)" $i) }}
{{- end }}
{{- if hasKey $source "forward" }}
{{- fail (printf "sources[%d].forward: set worker.forward instead (it forwards every source, its secret from a Secret)" $i) }}
{{- end }}
{{- if not $source.secrets }}
{{- fail (printf "sources[%d] needs secrets: [\"${NAME}\"], with NAME in sourceSecrets" $i) }}
{{- end }}
{{- range $j, $secret := $source.secrets }}
{{- $name := regexReplaceAll "^\\$\\{([A-Za-z_][A-Za-z0-9_]*)\\}$" (toString $secret) "${1}" }}
{{- if eq $name (toString $secret) }}
{{- fail (printf "sources[%d].secrets[%d] must be a \"${NAME}\" reference filled through sourceSecrets: a secret written in values would sit in a ConfigMap" $i $j) }}
{{- end }}
{{- if not (hasKey $.Values.sourceSecrets $name) }}
{{- fail (printf "sources[%d].secrets[%d] names ${%s}: add sourceSecrets.%s: { name: <Secret>, key: <key> }" $i $j $name $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- end -}}

{{/* Where the server reads the sources file the ConfigMap holds. */}}
{{- define "anvil.sourcesDir" -}}/etc/anvil{{- end -}}

{{/* True when the worker forwards (worker.forward.url set), checked: its secret must come from a Secret. */}}
{{- define "anvil.forwarding" -}}
{{- $forward := .Values.worker.forward | default dict -}}
{{- if $forward.url -}}
{{- $secret := $forward.secret | default dict -}}
{{- if or (not (kindIs "map" $secret)) (not $secret.name) (not $secret.key) -}}
{{- fail "worker.forward.secret needs { name: <Secret>, key: <key in it> }: the signing secret of the forwarded requests, never written in values" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{/*
The worker's command: the user's handler module, or forward mode (no handler: the sources file it is given
forwards every source). Exactly one of the two.
*/}}
{{- define "anvil.workerArgs" -}}
{{- $forwarding := include "anvil.forwarding" . -}}
{{- if and .Values.worker.handler $forwarding -}}
{{- fail "worker.handler and worker.forward.url do not go together: forward mode sends every source's events to worker.forward.url, so the handler would never run; set one" -}}
{{- else if .Values.worker.handler -}}
["worker", "--handler", {{ .Values.worker.handler | quote }}]
{{- else if $forwarding -}}
["worker"]
{{- else -}}
{{- fail "worker.handler or worker.forward.url is required: your handler module in an image built FROM Anvil's, or your service's URL to forward each event to (docs/deployment.md: Helm chart); the sample handler would mark every real event done unhandled" -}}
{{- end -}}
{{- end -}}

{{/* The environment variable the worker's sources file names for the forward secret. */}}
{{- define "anvil.forwardSecretEnv" -}}ANVIL_FORWARD_SECRET{{- end -}}

{{/*
The worker's sources file in forward mode: the sources (or, without them, the single default source, named
`default` as the server names it), each forwarding to worker.forward with its secret a ${NAME} reference.
The worker reads only the forward secret (it verifies nothing): the sources' own secrets stay unread.
*/}}
{{- define "anvil.workerSources" -}}
{{- $forward := dict "url" .Values.worker.forward.url "secret" (printf "${%s}" (include "anvil.forwardSecretEnv" .)) -}}
{{- with .Values.worker.forward.scheme }}{{ $_ := set $forward "scheme" . }}{{ end -}}
{{- $sources := list -}}
{{- if .Values.sources -}}
{{- range .Values.sources }}{{ $sources = append $sources (merge (dict "forward" $forward) .) }}{{ end -}}
{{- else -}}
{{- $sources = list (dict "name" "default" "path" .Values.server.path "secrets" (list "${WEBHOOK_SECRET}") "forward" $forward) -}}
{{- end -}}
{{- toYaml (dict "sources" $sources) -}}
{{- end -}}

{{/* ANVIL_FORWARD_ALLOW_NETS from worker.forward.allowNets: a string, or a list joined with commas. */}}
{{- define "anvil.forwardAllowNets" -}}
{{- $nets := .Values.worker.forward.allowNets -}}
{{- if kindIs "slice" $nets }}{{ join "," $nets }}{{ else }}{{ $nets | default "" }}{{ end -}}
{{- end -}}

{{/* A Kubernetes memory quantity in bytes: whole numbers with Ki, Mi, Gi, Ti, k, M, G or T, or none. Call with (list value "where"). */}}
{{- define "anvil.bytes" -}}
{{- $value := index . 0 -}}
{{- $where := index . 1 -}}
{{- if or (kindIs "float64" $value) (kindIs "int" $value) (kindIs "int64" $value) -}}
{{- int64 $value -}}
{{- else -}}
{{- $text := toString $value -}}
{{- if not (regexMatch "^[0-9]+(Ki|Mi|Gi|Ti|k|M|G|T)?$" $text) -}}
{{- fail (printf "%s: cannot read %q as a memory quantity in whole units (e.g. 512Mi, 1Gi)" $where $text) -}}
{{- end -}}
{{- $units := dict "Ki" 1024 "Mi" 1048576 "Gi" 1073741824 "Ti" 1099511627776 "k" 1000 "M" 1000000 "G" 1000000000 "T" 1000000000000 -}}
{{- $unit := regexReplaceAll "^[0-9]+" $text "" -}}
{{- mul (atoi (regexReplaceAll "[A-Za-z]+$" $text "")) (default 1 (get $units $unit)) -}}
{{- end -}}
{{- end -}}

{{/*
The bundled Redis's maxmemory: redis.maxmemory as given, else maxmemoryPercent of the container's memory
limit, so the fork of an AOF rewrite has room under the limit (values.yaml says why).
*/}}
{{- define "anvil.redisMaxmemory" -}}
{{- if .Values.redis.maxmemory -}}
{{- .Values.redis.maxmemory -}}
{{- else -}}
{{- $limit := dig "limits" "memory" "" .Values.redis.resources -}}
{{- if not $limit -}}
{{- fail "redis.resources.limits.memory is required to derive maxmemory from it (or set redis.maxmemory)" -}}
{{- end -}}
{{- $percent := int .Values.redis.maxmemoryPercent -}}
{{- if or (lt $percent 1) (gt $percent 90) -}}
{{- fail (printf "redis.maxmemoryPercent must be from 1 to 90 (got %v): the rest of the limit is the AOF rewrite's room" .Values.redis.maxmemoryPercent) -}}
{{- end -}}
{{- div (mul (include "anvil.bytes" (list $limit "redis.resources.limits.memory") | atoi) $percent) 100 -}}
{{- end -}}
{{- end -}}


{{/* ANVIL_DATABASE_URL from its Secret, and the schema when set; nothing without database.existingSecret. */}}
{{- define "anvil.databaseEnv" -}}
{{- with .Values.database.existingSecret }}
{{- include "anvil.secretEnv" (dict "where" "database" "env" (dict "ANVIL_DATABASE_URL" (dict "name" . "key" $.Values.database.key))) }}
{{- include "anvil.envIfSet" (list (list "ANVIL_DB_SCHEMA" $.Values.database.schema) (list "ANVIL_JOURNAL_QUEUE" $.Values.database.journalQueue)) }}
{{- end }}
{{- end -}}

{{/*
Where operational events link (docs/outgoing-webhooks.md#operational-webhooks): ANVIL_CONSOLE_URL for the worker,
which writes them, and ANVIL_PORTAL_PUBLIC_URL for both (the server's portal links start there too); nothing unset.
*/}}
{{- define "anvil.pageUrlsEnv" -}}
{{- include "anvil.envIfSet" (list (list "ANVIL_PORTAL_PUBLIC_URL" .root.Values.admin.portalPublicUrl)) }}
{{- if .worker }}
{{- include "anvil.envIfSet" (list (list "ANVIL_CONSOLE_URL" .root.Values.admin.consoleUrl)) }}
{{- end }}
{{- end -}}

{{/* ANVIL_ENCRYPTION_KEY from its Secret, for the admin API and the delivery worker; nothing without encryption.existingSecret. */}}
{{- define "anvil.encryptionEnv" -}}
{{- with .Values.encryption.existingSecret }}
{{- include "anvil.secretEnv" (dict "where" "encryption" "env" (dict "ANVIL_ENCRYPTION_KEY" (dict "name" . "key" $.Values.encryption.key))) }}
{{- end }}
{{- end -}}

{{/* The admin API's token from its Secret and its own port; nothing without admin.existingSecret. */}}
{{- define "anvil.adminEnv" -}}
{{- with .Values.admin.existingSecret }}
{{- include "anvil.secretEnv" (dict "where" "admin" "env" (dict "ANVIL_ADMIN_TOKEN" (dict "name" . "key" $.Values.admin.key))) }}
- name: ANVIL_ADMIN_PORT
  value: {{ $.Values.admin.port | quote }}
{{- with $.Values.admin.portalLimits }}
- name: ANVIL_PORTAL_LIMITS
  value: {{ include "anvil.portalLimits" . | quote }}
{{- end }}
{{- end }}
{{- end -}}

{{/* admin.portalLimits as ANVIL_PORTAL_LIMITS takes it: name=value pairs, comma-separated, in name order. */}}
{{- define "anvil.portalLimits" -}}
{{- $pairs := list }}
{{- range $name, $value := . }}
{{- $pairs = append $pairs (printf "%s=%v" $name (int64 $value)) }}
{{- end }}
{{- join "," $pairs }}
{{- end -}}
