//! Where objects come from: live watches, snapshot files, the demo.
