//! Guarded repair actions: pure planning, guarded execution, audit.
