//! Request counters for benchmarks: how many LIST, WATCH, GET and write requests the emulator
//! has served, readable at `GET /metrics` as JSON. Counting happens server-side so that a
//! client's claims about its own traffic ("no LIST after sync") can be checked from outside.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use hyper::Method;
use serde_json::{Value, json};

use crate::sim::routes::ResourcePath;
use crate::sim::watch::is_watch;

/// The path the counters are served at (outside the API's own paths).
pub const PATH: &str = "/metrics";

#[derive(Debug, Default)]
pub struct RequestCounts {
    list: AtomicU64,
    watch: AtomicU64,
    get: AtomicU64,
    write: AtomicU64,
    /// Every distinct `User-Agent` of a resource request (a few at most: one per client).
    agents: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl RequestCounts {
    /// Counts one resource request by verb, before it is authorised or answered.
    pub fn record(
        &self,
        method: &Method,
        path: &ResourcePath,
        query: &HashMap<String, String>,
        user_agent: &str,
    ) {
        if let Ok(mut agents) = self.agents.lock()
            && !agents.contains(user_agent)
            && agents.len() < 64
        {
            agents.insert(user_agent.to_string());
        }
        let c = match (method, path.name.is_some()) {
            (&Method::GET, _) if path.watch_prefix || is_watch(query) => &self.watch,
            (&Method::GET, true) => &self.get,
            (&Method::GET, false) => &self.list,
            _ => &self.write,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }

    pub fn to_json(&self) -> Value {
        let n = |c: &AtomicU64| c.load(Ordering::Relaxed);
        json!({
            "list": n(&self.list),
            "watch": n(&self.watch),
            "get": n(&self.get),
            "write": n(&self.write),
            "userAgents": self.agents.lock().map(|a| a.iter().cloned().collect::<Vec<_>>()).unwrap_or_default(),
        })
    }
}
