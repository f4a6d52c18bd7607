"""ROS 2 nodes and the demo composition: thin layers over the ROS-free core (message → numpy →
core → message). The only package, with cli, that imports rclpy."""
