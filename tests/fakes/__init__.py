"""Protocol-faithful fake provider servers (one module per vendor) on 127.0.0.1."""
