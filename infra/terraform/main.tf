# Anvil on Hetzner Cloud: one Redis VM, one gateway VM (`anvil serve`) and worker_count worker VMs
# (`anvil worker`), on a private network. Secrets (the webhook secret and the Redis password) are
# installed over SSH into root-only files after boot: user_data holds none, because anything on the VM
# and anyone with API access can read user_data back from the metadata service.

resource "random_password" "redis" {
  length  = 40
  special = false # it goes into a redis:// URL
}

locals {
  redis_url = "redis://:${random_password.redis.result}@${local.redis_ip}:6379"
  common_env = {
    REDIS_URL = local.redis_url
    LOG_LEVEL = var.log_level
  }
  server_env = merge(local.common_env, { WEBHOOK_SECRET = var.webhook_secret, PORT = "3000" })
  worker_env = merge(local.common_env, { WORKER_CONCURRENCY = tostring(var.worker_concurrency), PORT = "3000" })
}

resource "hcloud_server" "redis" {
  name         = "${var.name}-redis"
  server_type  = var.redis_server_type
  image        = "debian-12"
  location     = var.location
  ssh_keys     = var.ssh_keys
  firewall_ids = [hcloud_firewall.ssh.id]
  user_data = templatefile("${path.module}/templates/redis.yaml.tftpl", {
    private_ip = local.redis_ip
    maxmemory  = var.redis_maxmemory
  })
  network {
    network_id = hcloud_network.anvil.id
    ip         = local.redis_ip
  }
  depends_on = [hcloud_network_subnet.anvil]
}

resource "hcloud_server" "server" {
  name         = "${var.name}-server"
  server_type  = var.server_type
  image        = "debian-12"
  location     = var.location
  ssh_keys     = var.ssh_keys
  firewall_ids = [hcloud_firewall.ssh.id, hcloud_firewall.webhooks.id]
  user_data = templatefile("${path.module}/templates/app.yaml.tftpl", {
    image   = var.image
    command = "serve"
    publish = "0.0.0.0:80:3000"
  })
  network {
    network_id = hcloud_network.anvil.id
    ip         = local.server_ip
  }
  depends_on = [hcloud_network_subnet.anvil]
}

resource "hcloud_server" "worker" {
  count        = var.worker_count
  name         = "${var.name}-worker-${count.index}"
  server_type  = var.server_type
  image        = "debian-12"
  location     = var.location
  ssh_keys     = var.ssh_keys
  firewall_ids = [hcloud_firewall.ssh.id]
  user_data = templatefile("${path.module}/templates/app.yaml.tftpl", {
    image   = var.image
    command = "worker --handler ${var.worker_handler}"
    # Health and metrics on the private address only, for a scraper on the network.
    publish = "${local.worker_ips[count.index]}:3000:3000"
  })
  network {
    network_id = hcloud_network.anvil.id
    ip         = local.worker_ips[count.index]
  }
  depends_on = [hcloud_network_subnet.anvil]
}

# The Redis password, over SSH, once cloud-init has installed Redis.
resource "terraform_data" "redis_secret" {
  triggers_replace = [hcloud_server.redis.id, sha256(random_password.redis.result)]
  connection {
    host        = hcloud_server.redis.ipv4_address
    user        = "root"
    private_key = var.ssh_private_key
  }
  provisioner "file" {
    content     = "requirepass ${random_password.redis.result}\n"
    destination = "/etc/redis/anvil-secret.conf"
  }
  provisioner "remote-exec" {
    inline = [
      "cloud-init status --wait >/dev/null",
      "chown redis:redis /etc/redis/anvil-secret.conf && chmod 0600 /etc/redis/anvil-secret.conf",
      "systemctl enable --now redis-server && systemctl restart redis-server",
    ]
  }
}

# The environment of each Anvil VM (secrets included), over SSH into a root-only file; then start it.
resource "terraform_data" "anvil_env" {
  for_each = merge(
    { server = { host = hcloud_server.server.ipv4_address, id = hcloud_server.server.id, env = local.server_env } },
    { for i, w in hcloud_server.worker : "worker-${i}" => { host = w.ipv4_address, id = w.id, env = local.worker_env } }
  )
  triggers_replace = [each.value.id, sha256(jsonencode(each.value.env)), var.image]
  connection {
    host        = each.value.host
    user        = "root"
    private_key = var.ssh_private_key
  }
  provisioner "file" {
    content     = join("", [for k, v in each.value.env : "${k}=${v}\n"])
    destination = "/etc/anvil/anvil.env"
  }
  provisioner "remote-exec" {
    inline = [
      "cloud-init status --wait >/dev/null",
      "chmod 0600 /etc/anvil/anvil.env",
      "systemctl enable anvil && systemctl restart anvil",
    ]
  }
  depends_on = [terraform_data.redis_secret]
}
