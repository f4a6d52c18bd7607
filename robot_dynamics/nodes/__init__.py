"""Thin rclpy nodes over the ROS-free core: dynamics_model, id_controller, simulator."""
