output "webhook_url" {
  description = "Where senders deliver (plain HTTP on port 80: put TLS in front)."
  value       = "http://${hcloud_server.server.ipv4_address}/webhooks"
}

output "server_ip" {
  value = hcloud_server.server.ipv4_address
}

output "worker_private_ips" {
  description = "Workers' health and metrics (port 3000), reachable on the private network only."
  value       = local.worker_ips
}

output "redis_private_ip" {
  value = local.redis_ip
}

output "image" {
  description = "The pinned image every VM runs."
  value       = var.image
}
