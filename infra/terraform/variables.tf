variable "name" {
  description = "Prefix of every resource name."
  type        = string
  default     = "anvil"
}

variable "location" {
  description = "Hetzner location (nbg1, fsn1, hel1, ash, hil)."
  type        = string
  default     = "nbg1"
}

variable "image" {
  description = "Anvil's image, built from the repository's Dockerfile and pushed to your registry (none is published), or yours built FROM it with your handler; pinned: a version tag or a digest, never latest."
  type        = string
  validation {
    condition     = can(regex("(:[0-9]+\\.[0-9]+\\.[0-9]+[^:]*|@sha256:[0-9a-f]{64})$", var.image))
    error_message = "image must be pinned to a version tag (x.y.z) or a sha256 digest."
  }
}

variable "worker_count" {
  description = "How many worker VMs run `anvil worker`."
  type        = number
  default     = 2
  validation {
    condition     = var.worker_count >= 1 && var.worker_count == floor(var.worker_count)
    error_message = "worker_count must be a whole number of at least 1."
  }
}

variable "worker_concurrency" {
  description = "Jobs each worker runs at once (WORKER_CONCURRENCY)."
  type        = number
  default     = 10
}

variable "worker_handler" {
  description = "Your handler module inside the image (build your image FROM Anvil's with your handler). No default: the image's sample handler only logs, and would mark every real event done."
  type        = string
}

variable "server_type" {
  description = "Hetzner server type of the gateway and the workers."
  type        = string
  default     = "cx22"
}

variable "redis_server_type" {
  description = "Hetzner server type of the Redis VM; size its memory from the bench report's bytes per event."
  type        = string
  default     = "cx22"
}

variable "redis_maxmemory" {
  description = "Redis maxmemory; beyond it writes are refused (noeviction) and webhooks get 503."
  type        = string
  default     = "1gb"
}

variable "ssh_keys" {
  description = "Names or ids of Hetzner SSH keys allowed on the VMs."
  type        = list(string)
}

variable "ssh_private_key" {
  description = "The private key of one of ssh_keys, used once per VM to install the secrets over SSH."
  type        = string
  sensitive   = true
}

variable "ssh_allowed_cidrs" {
  description = "The only addresses SSH is open to (your office, your CI runner). Must include where terraform runs."
  type        = list(string)
  validation {
    condition     = length(var.ssh_allowed_cidrs) > 0 && !contains(var.ssh_allowed_cidrs, "0.0.0.0/0") && !contains(var.ssh_allowed_cidrs, "::/0")
    error_message = "ssh_allowed_cidrs must list specific networks, not the whole internet."
  }
}

variable "webhook_secret" {
  description = "The HMAC secret webhooks are signed with. Installed over SSH, never in user_data."
  type        = string
  sensitive   = true
}

variable "log_level" {
  description = "LOG_LEVEL of every Anvil process."
  type        = string
  default     = "info"
}
