//! The Kubernetes API emulator and the scenario player.
