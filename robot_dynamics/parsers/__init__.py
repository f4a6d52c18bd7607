"""Files in, models out: URDF (the only module that reads XML), YAML configs, bundled resources."""
