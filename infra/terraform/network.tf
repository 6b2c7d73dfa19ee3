# Redis and Anvil talk over this private network only.
resource "hcloud_network" "anvil" {
  name     = "${var.name}-net"
  ip_range = "10.40.0.0/16"
}

resource "hcloud_network_subnet" "anvil" {
  network_id   = hcloud_network.anvil.id
  type         = "cloud"
  network_zone = "eu-central"
  ip_range     = "10.40.1.0/24"
}

locals {
  redis_ip   = cidrhost(hcloud_network_subnet.anvil.ip_range, 10)
  server_ip  = cidrhost(hcloud_network_subnet.anvil.ip_range, 20)
  worker_ips = [for i in range(var.worker_count) : cidrhost(hcloud_network_subnet.anvil.ip_range, 100 + i)]
}

# Public interfaces: SSH from the allow-list only. Hetzner firewalls filter public traffic; Redis has no
# public rule at all and listens on its private address only.
resource "hcloud_firewall" "ssh" {
  name = "${var.name}-ssh"
  rule {
    description = "SSH from the allow-list"
    direction   = "in"
    protocol    = "tcp"
    port        = "22"
    source_ips  = var.ssh_allowed_cidrs
  }
}

resource "hcloud_firewall" "webhooks" {
  name = "${var.name}-webhooks"
  rule {
    description = "Webhooks (put TLS in front: a Hetzner load balancer with a managed certificate)"
    direction   = "in"
    protocol    = "tcp"
    port        = "80"
    source_ips  = ["0.0.0.0/0", "::/0"]
  }
}
