//! The object store: every object as JSON, one cluster-wide resourceVersion counter, a bounded
//! change history per kind (what a watch resumes from) and a broadcast of each change to the
//! open watches. All writes go through `Txn::commit`, so history, broadcast and counter can never
//! disagree.

use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::model::{KINDS, Kind};
use crate::sim::selectors::Filter;
use crate::sim::status::ApiError;

/// Changes the controllers may fall behind by before they re-read the whole store.
const ALL_CHANGES_CAPACITY: usize = 4096;

/// Bytes of watch history kept by default, all kinds together: an object with a 1 MiB
/// annotation patched 1,500 times took the emulator to 2-3 GiB when only the number of
/// changes was bounded. etcd compacts by time, so a real server loses old versions too.
pub const DEFAULT_HISTORY_BYTES: usize = 64 << 20;

/// `(namespace, name)`; the namespace is empty for cluster-scoped kinds.
pub type ObjKey = (String, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeType {
    Added,
    Modified,
    Deleted,
}

impl ChangeType {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Added => "ADDED",
            ChangeType::Modified => "MODIFIED",
            ChangeType::Deleted => "DELETED",
        }
    }
}

/// One committed change. `previous` lets a selector-filtered watch tell "stopped matching"
/// (sent as DELETED) from "changed while matching" (MODIFIED), as the real server does.
#[derive(Debug, Clone)]
pub struct Change {
    pub rv: u64,
    pub kind: Kind,
    pub typ: ChangeType,
    pub object: Value,
    pub previous: Option<Value>,
}

struct KindState {
    objects: BTreeMap<ObjKey, Value>,
    /// Each change with the bytes it holds (`change_bytes`).
    history: VecDeque<(Arc<Change>, usize)>,
    /// resourceVersion of the newest change dropped from `history`: a watch from an older
    /// version cannot be served completely and must get 410 Expired.
    evicted_rv: u64,
    tx: broadcast::Sender<Arc<Change>>,
}

pub struct Txn {
    rv: u64,
    /// Every change of every kind: what the simulated controllers react to.
    all_tx: broadcast::Sender<Arc<Change>>,
    seq: u64,
    rng: u64,
    history_limit: usize,
    /// The bytes all kinds' histories may hold, and what they hold.
    history_budget: usize,
    history_bytes: usize,
    kinds: Vec<KindState>,
}

/// Shared, cheaply clonable handle on the store.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Mutex<Txn>>,
    /// Wakes the controllers without a change (switched back on: time to catch up).
    nudge: Arc<tokio::sync::Notify>,
}

/// What a list returns before it is shaped into a `<Kind>List`.
#[derive(Debug, Clone)]
pub struct ListPage {
    pub items: Vec<Value>,
    pub head: PageHead,
}

/// A list page without its items: the version it was read at and what is left.
#[derive(Debug, Clone)]
pub struct PageHead {
    pub resource_version: u64,
    pub continue_token: Option<String>,
    pub remaining: Option<usize>,
}

/// The start of a watch: what to send first, then the live feed.
pub struct Subscription {
    pub initial: Vec<Arc<Change>>,
    pub rx: broadcast::Receiver<Arc<Change>>,
    pub current_rv: u64,
}

pub fn key_of(obj: &Value) -> ObjKey {
    let s = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    (s("/metadata/namespace"), s("/metadata/name"))
}

/// Where a continued list resumes: read at `rv` (`None`: at the latest version, what the
/// token in a 410 offers) from `start` on.
#[derive(Debug, Clone, PartialEq)]
struct Continue {
    rv: Option<u64>,
    start: Bound<ObjKey>,
}

/// The real server's token (`k8s.io/apiserver/pkg/storage`): base64url of
/// `{"v":"meta.k8s.io/v1","rv":N,"start":"<key after the prefix>\0"}`, the key relative to the
/// list's prefix (`ns/name` across namespaces, `name` in one namespace or for a cluster-scoped
/// kind). `rv` -1 reads the rest at the latest version. Same shape as the real one, so that what
/// a client logs or stores looks the same.
fn encode_continue(rv: i64, key: &ObjKey, in_namespace: bool) -> String {
    use base64::Engine as _;
    let rel = if in_namespace || key.0.is_empty() {
        key.1.clone()
    } else {
        format!("{}/{}", key.0, key.1)
    };
    // Written by hand for the real field order (a JSON map would sort the keys).
    let start = Value::String(format!("{rel}\u{0}"));
    let token = format!(r#"{{"v":"meta.k8s.io/v1","rv":{rv},"start":{start}}}"#);
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token)
}

/// Reads a token as the real server does, with its error wording (`continue key is not
/// valid: ...`). `namespace`: the list's namespace, when it is read in one.
fn decode_continue(
    token: &str,
    namespaced_kind: bool,
    namespace: Option<&str>,
) -> Result<Continue, String> {
    use base64::Engine as _;
    const NOT_VALID: &str = "continue key is not valid";
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|e| {
            let at = match e {
                base64::DecodeError::InvalidByte(at, _)
                | base64::DecodeError::InvalidLastSymbol(at, _) => at,
                base64::DecodeError::InvalidLength(at) => at,
                base64::DecodeError::InvalidPadding => token.len(),
            };
            format!("{NOT_VALID}: illegal base64 data at input byte {at}")
        })?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|e| format!("{NOT_VALID}: {e}"))?;
    let version = v["v"].as_str().unwrap_or_default();
    if version != "meta.k8s.io/v1" {
        return Err(format!(
            "{NOT_VALID}: server does not recognize this encoded version \"{version}\""
        ));
    }
    let rv = v["rv"].as_i64().unwrap_or(0);
    if rv == 0 {
        return Err(format!(
            "{NOT_VALID}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        ));
    }
    let start = v["start"].as_str().unwrap_or_default();
    if start.is_empty() {
        return Err(format!("{NOT_VALID}: encoded start key empty"));
    }
    // The real key ends in NUL: "the first key after the last one given".
    let (rel, after) = match start.strip_suffix('\u{0}') {
        Some(rel) => (rel, true),
        None => (start, false),
    };
    let key = match (namespace, namespaced_kind) {
        (Some(ns), _) => (ns.to_string(), rel.to_string()),
        (None, true) => match rel.split_once('/') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (rel.to_string(), String::new()),
        },
        (None, false) => (String::new(), rel.to_string()),
    };
    Ok(Continue {
        rv: u64::try_from(rv).ok(),
        start: if after {
            Bound::Excluded(key)
        } else {
            Bound::Included(key)
        },
    })
}

impl Txn {
    pub fn rv(&self) -> u64 {
        self.rv
    }

    pub fn get(&self, kind: Kind, key: &ObjKey) -> Option<&Value> {
        self.kinds[kind as usize].objects.get(key)
    }

    pub fn objects(&self, kind: Kind) -> impl Iterator<Item = &Value> {
        self.kinds[kind as usize].objects.values()
    }

    /// A pseudo-random u64 (splitmix64): used for uids and generated names, never for anything
    /// a test asserts on.
    pub fn random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A v4-shaped UUID from a counter and the generator: unique within the process.
    pub fn new_uid(&mut self) -> String {
        self.seq += 1;
        let a = self.random();
        let b = self.random() ^ self.seq;
        format!(
            "{:08x}-{:04x}-4{:03x}-{:x}{:03x}-{:012x}",
            (a >> 32) as u32,
            (a >> 16) as u16,
            (a & 0xfff) as u16,
            8 + ((b >> 60) & 0x3),
            ((b >> 48) & 0xfff) as u16,
            b & 0xffff_ffff_ffff
        )
    }

    /// The suffix the real server appends to `generateName` (5 characters of its alphabet).
    pub fn name_suffix(&mut self) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        let mut r = self.random();
        (0..5)
            .map(|_| {
                let c = ALPHABET[(r % ALPHABET.len() as u64) as usize] as char;
                r /= ALPHABET.len() as u64;
                c
            })
            .collect()
    }

    /// Writes (`Some`) or removes (`None`) an object, bumps the counter, records and broadcasts
    /// the change. Returns the stored object (or the final state of a removed one).
    pub fn commit(&mut self, kind: Kind, key: &ObjKey, new: Option<Value>) -> Value {
        self.rv += 1;
        let rv = self.rv;
        let limit = self.history_limit;
        let state = &mut self.kinds[kind as usize];
        let previous = state.objects.get(key).cloned();
        let (typ, object) = match new {
            Some(mut obj) => {
                set_rv(&mut obj, rv);
                state.objects.insert(key.clone(), obj.clone());
                let typ = if previous.is_some() {
                    ChangeType::Modified
                } else {
                    ChangeType::Added
                };
                (typ, obj)
            }
            None => {
                let mut obj = state.objects.remove(key).unwrap_or(Value::Null);
                set_rv(&mut obj, rv);
                (ChangeType::Deleted, obj)
            }
        };
        let change = Arc::new(Change {
            rv,
            kind,
            typ,
            object: object.clone(),
            previous,
        });
        let bytes = change_bytes(&change);
        state.history.push_back((change.clone(), bytes));
        self.history_bytes += bytes;
        while state.history.len() > limit {
            if let Some((old, bytes)) = state.history.pop_front() {
                state.evicted_rv = old.rv;
                self.history_bytes -= bytes;
            }
        }
        // No receivers is normal (nobody watching this kind).
        let _ = state.tx.send(change.clone());
        let _ = self.all_tx.send(change);
        self.compact_over_budget();
        object
    }

    /// Drops the oldest changes, of whichever kind, until the histories fit the byte budget:
    /// a watch resuming from a dropped version gets 410 Expired and relists.
    fn compact_over_budget(&mut self) {
        while self.history_bytes > self.history_budget {
            let oldest = self
                .kinds
                .iter_mut()
                .filter_map(|k| Some((k.history.front()?.0.rv, k)))
                .min_by_key(|(rv, _)| *rv);
            let Some((_, state)) = oldest else { break };
            if let Some((old, bytes)) = state.history.pop_front() {
                state.evicted_rv = old.rv;
                self.history_bytes -= bytes;
            }
        }
    }

    /// Replaces a stored object without recording a change: only for loading dumps, where the
    /// object must carry the version it had in the source cluster.
    pub fn replace_silently(&mut self, kind: Kind, key: &ObjKey, obj: Value) -> Value {
        let state = &mut self.kinds[kind as usize];
        state.objects.insert(key.clone(), obj.clone());
        obj
    }

    /// Moves the counter forward (loading a dump whose objects carry higher versions).
    pub fn advance_rv(&mut self, at_least: u64) {
        self.rv = self.rv.max(at_least);
    }
}

/// Roughly what a change holds in memory (its object and the previous version), without
/// serialising it: strings and keys by length, every value and entry by a fixed overhead.
fn change_bytes(change: &Change) -> usize {
    fn value_bytes(v: &Value) -> usize {
        const NODE: usize = 32;
        NODE + match v {
            Value::String(s) => s.len(),
            Value::Array(a) => a.iter().map(value_bytes).sum(),
            Value::Object(m) => m.iter().map(|(k, v)| NODE + k.len() + value_bytes(v)).sum(),
            _ => 0,
        }
    }
    std::mem::size_of::<Change>()
        + value_bytes(&change.object)
        + change.previous.as_ref().map_or(0, value_bytes)
}

pub fn set_rv(obj: &mut Value, rv: u64) {
    if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.insert("resourceVersion".into(), json!(rv.to_string()));
    }
}

impl Store {
    pub fn new(history_limit: usize, seed: u64) -> Self {
        Store::bounded(history_limit, DEFAULT_HISTORY_BYTES, seed)
    }

    /// A store whose watch history holds at most `history_limit` changes per kind and
    /// `history_bytes` bytes in all.
    pub fn bounded(history_limit: usize, history_bytes: usize, seed: u64) -> Self {
        let cap = history_limit.max(16);
        let kinds = KINDS
            .iter()
            .map(|_| KindState {
                objects: BTreeMap::new(),
                history: VecDeque::new(),
                evicted_rv: 0,
                tx: broadcast::channel(cap).0,
            })
            .collect();
        Store {
            inner: Arc::new(Mutex::new(Txn {
                // Real clusters never start at 1; a non-trivial start catches clients that
                // assume small numbers.
                rv: 1000,
                all_tx: broadcast::channel(ALL_CHANGES_CAPACITY).0,
                seq: 0,
                rng: seed,
                history_limit: history_limit.max(1),
                history_budget: history_bytes,
                history_bytes: 0,
                kinds,
            })),
            nudge: Arc::new(tokio::sync::Notify::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Txn> {
        // A panic while holding the lock cannot leave a half-written object (commit is the only
        // writer and does not panic), so a poisoned lock is still consistent.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` atomically: read-check-write sequences (update with resourceVersion checks,
    /// delete with preconditions) cannot interleave.
    pub fn transact<R>(&self, f: impl FnOnce(&mut Txn) -> R) -> R {
        let mut g = self.lock();
        f(&mut g)
    }

    pub fn current_rv(&self) -> u64 {
        self.lock().rv
    }

    pub fn get(&self, kind: Kind, namespace: &str, name: &str) -> Option<Value> {
        self.lock()
            .get(kind, &(namespace.to_string(), name.to_string()))
            .cloned()
    }

    /// All objects of a kind matching a filter, in key order.
    pub fn all(&self, kind: Kind, filter: &Filter) -> Vec<Value> {
        self.lock()
            .objects(kind)
            .filter(|o| filter.matches(o))
            .cloned()
            .collect()
    }

    /// A page of a list. The first page is read at the latest version; a `continue` token
    /// reads the next page at the first page's version, as etcd does, so that a paged list
    /// shows every object exactly once and as it was then, whatever was written in between.
    /// When that version's changes are no longer all in the history (etcd compacted it): 410
    /// Expired, with a token for the rest at the latest version.
    pub fn list(
        &self,
        kind: Kind,
        filter: &Filter,
        limit: Option<usize>,
        continue_token: Option<&str>,
    ) -> Result<ListPage, ApiError> {
        let mut items = Vec::new();
        let head = self.list_each(kind, filter, limit, continue_token, |o| {
            items.push(o.clone());
        })?;
        Ok(ListPage { items, head })
    }

    /// `list`, handing each item to `each` under the store's lock instead of copying it: the
    /// JSON list is written straight from the store (a real API server serves lists from its
    /// watch cache; copying every object first made the emulator, not the client, what a
    /// client's initial list waited for).
    pub fn list_each(
        &self,
        kind: Kind,
        filter: &Filter,
        limit: Option<usize>,
        continue_token: Option<&str>,
        mut each: impl FnMut(&Value),
    ) -> Result<PageHead, ApiError> {
        let txn = self.lock();
        let in_namespace = filter.namespace.is_some();
        let cont = match continue_token.filter(|t| !t.is_empty()) {
            Some(t) => Some(
                decode_continue(t, kind.info().namespaced, filter.namespace.as_deref())
                    .map_err(|why| ApiError::invalid_continue(&why))?,
            ),
            None => None,
        };
        let state = &txn.kinds[kind as usize];
        let rv = cont
            .as_ref()
            .and_then(|c| c.rv)
            .map_or(txn.rv, |rv| rv.min(txn.rv));
        let start = cont.map_or(Bound::Unbounded, |c| c.start);
        if rv < state.evicted_rv {
            let next = match &start {
                Bound::Excluded(k) | Bound::Included(k) => encode_continue(-1, k, in_namespace),
                Bound::Unbounded => String::new(),
            };
            return Err(ApiError::continue_expired(next));
        }
        // The objects as they were at `rv`: what changed since, as it was before its first
        // change after `rv` (None: did not exist).
        let mut then: BTreeMap<ObjKey, Option<&Value>> = BTreeMap::new();
        for (c, _) in state.history.iter().rev().take_while(|(c, _)| c.rv > rv) {
            then.insert(key_of(&c.object), c.previous.as_ref());
        }
        let range = (start, Bound::Unbounded);
        let mut now = state
            .objects
            .range(range.clone())
            .filter(|(k, _)| !then.contains_key(*k))
            .peekable();
        let mut old = then
            .range(range)
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .peekable();
        let mut matching = std::iter::from_fn(|| match (now.peek(), old.peek()) {
            (Some((a, _)), Some((b, _))) if a < b => now.next(),
            (_, Some(_)) => old.next(),
            (Some(_), None) => now.next(),
            (None, None) => None,
        })
        .filter(|(_, o)| filter.matches(o));
        let mut last_key = None;
        let limit = limit.filter(|l| *l > 0);
        for (count, (k, o)) in matching.by_ref().enumerate() {
            each(o);
            last_key = Some(k);
            if limit.is_some_and(|l| count + 1 >= l) {
                break;
            }
        }
        // With a selector the server does not count the rest, so whether there is any is
        // enough: counting it would read every remaining object on every page.
        let remaining = if filter.selects_all() {
            matching.count()
        } else {
            usize::from(matching.next().is_some())
        };
        let (continue_token, remaining) = match (limit, last_key) {
            (Some(_), Some(k)) if remaining > 0 => (
                Some(encode_continue(
                    i64::try_from(rv).unwrap_or(i64::MAX),
                    k,
                    in_namespace,
                )),
                // The real server counts the rest only when no selector narrows it.
                filter.selects_all().then_some(remaining),
            ),
            _ => (None, None),
        };
        Ok(PageHead {
            resource_version: rv,
            continue_token,
            remaining,
        })
    }

    /// Starts a watch. `since = None` (resourceVersion "" or "0") sends every current object as
    /// ADDED; `Some(rv)` replays the kept history after `rv`, or fails with 410 when part of it
    /// was already dropped.
    pub fn subscribe(&self, kind: Kind, since: Option<u64>) -> Result<Subscription, ApiError> {
        let txn = self.lock();
        let state = &txn.kinds[kind as usize];
        let initial = match since {
            None => state
                .objects
                .values()
                .map(|o| {
                    Arc::new(Change {
                        rv: txn.rv,
                        kind,
                        typ: ChangeType::Added,
                        object: o.clone(),
                        previous: None,
                    })
                })
                .collect(),
            Some(rv) => {
                if rv < state.evicted_rv {
                    return Err(ApiError::expired(format!(
                        "too old resource version: {rv} ({})",
                        state.evicted_rv
                    )));
                }
                state
                    .history
                    .iter()
                    .filter(|(c, _)| c.rv > rv)
                    .map(|(c, _)| Arc::clone(c))
                    .collect()
            }
        };
        // Subscribing under the same lock as the replay: no change can fall in between.
        Ok(Subscription {
            initial,
            rx: state.tx.subscribe(),
            current_rv: txn.rv,
        })
    }

    /// Forgets all history: any watch resuming from a version before now gets 410 Expired.
    /// Models etcd compaction.
    pub fn compact(&self) {
        let mut txn = self.lock();
        let rv = txn.rv;
        for state in &mut txn.kinds {
            state.history.clear();
            state.evicted_rv = rv;
        }
        txn.history_bytes = 0;
    }

    /// What the watch histories hold, in bytes (as `change_bytes` counts them), recounted.
    pub fn history_bytes(&self) -> usize {
        let txn = self.lock();
        txn.kinds
            .iter()
            .flat_map(|k| k.history.iter())
            .map(|(c, _)| change_bytes(c))
            .sum()
    }

    /// Live feed of one kind's changes.
    pub fn changes(&self, kind: Kind) -> broadcast::Receiver<Arc<Change>> {
        self.lock().kinds[kind as usize].tx.subscribe()
    }

    /// Live feed of every change of every kind (the simulated controllers listen here). A
    /// receiver that falls more than `ALL_CHANGES_CAPACITY` behind gets `Lagged` and must
    /// re-read the store, as an informer relists.
    pub fn all_changes(&self) -> broadcast::Receiver<Arc<Change>> {
        self.lock().all_tx.subscribe()
    }

    /// The current version, and a feed that carries every change after it: read under the
    /// same lock, so a change is either counted in the version or delivered by the feed.
    pub fn all_changes_since_now(&self) -> (u64, broadcast::Receiver<Arc<Change>>) {
        let t = self.lock();
        (t.rv, t.all_tx.subscribe())
    }

    /// Wakes whoever waits in `nudged` (the controllers, after being switched back on).
    pub fn nudge(&self) {
        self.nudge.notify_one();
    }

    pub async fn nudged(&self) {
        self.nudge.notified().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_tokens_round_trip_and_garbage_is_worded_as_the_real_server() {
        let k = ("ns".to_string(), "a-b".to_string());
        let across = decode_continue(&encode_continue(7, &k, false), true, None);
        assert_eq!(
            across,
            Ok(Continue {
                rv: Some(7),
                start: Bound::Excluded(k.clone())
            })
        );
        let within = decode_continue(&encode_continue(7, &k, true), true, Some("ns"));
        assert_eq!(across, within);
        let latest = decode_continue(&encode_continue(-1, &k, false), true, None);
        assert_eq!(latest.map(|c| c.rv), Ok(None));
        let garbage = decode_continue("zz!", true, None);
        assert_eq!(
            garbage,
            Err("continue key is not valid: illegal base64 data at input byte 2".into())
        );
        use base64::Engine as _;
        let zero = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a\u0000"}"#);
        assert!(
            decode_continue(&zero, true, None)
                .is_err_and(|e| e.contains("incorrect encoded start resourceVersion"))
        );
    }

    fn put_ns(s: &Store, name: &str) {
        s.transact(|t| {
            let key = (String::new(), name.to_string());
            t.commit(
                Kind::Namespace,
                &key,
                Some(json!({"metadata": {"name": name}})),
            )
        });
    }

    fn names(page: &ListPage) -> Vec<String> {
        page.items
            .iter()
            .map(|o| {
                o["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn a_continued_list_reads_the_first_pages_version() {
        let s = Store::new(100, 1);
        for n in ["a", "b", "c", "d"] {
            put_ns(&s, n);
        }
        let all = Filter::default();
        let first = s.list(Kind::Namespace, &all, Some(2), None).unwrap();
        assert_eq!(names(&first), ["a", "b"]);
        assert_eq!(first.head.remaining, Some(2));
        // Between the pages: one object deleted, one created, one changed.
        s.transact(|t| t.commit(Kind::Namespace, &(String::new(), "c".into()), None));
        put_ns(&s, "bb");
        s.transact(|t| {
            t.commit(
                Kind::Namespace,
                &(String::new(), "d".into()),
                Some(json!({"metadata": {"name": "d", "labels": {"new": "yes"}}})),
            )
        });
        let next = s
            .list(
                Kind::Namespace,
                &all,
                Some(2),
                first.head.continue_token.as_deref(),
            )
            .unwrap();
        assert_eq!(names(&next), ["c", "d"], "as they were at the first page");
        assert_eq!(next.head.resource_version, first.head.resource_version);
        assert!(next.items[1]["metadata"].get("labels").is_none());
        assert_eq!(next.head.continue_token, None);

        // Once the history no longer reaches back: 410, and a token for the rest at the latest.
        s.compact();
        let err = s
            .list(
                Kind::Namespace,
                &all,
                Some(2),
                first.head.continue_token.as_deref(),
            )
            .unwrap_err();
        assert_eq!((err.code, err.reason), (410, Some("Expired")));
        let rest = s
            .list(Kind::Namespace, &all, None, err.list_continue.as_deref())
            .unwrap();
        assert_eq!(names(&rest), ["bb", "d"]);
        assert_eq!(rest.head.resource_version, s.current_rv());
    }

    #[test]
    fn history_is_bounded_and_expires() {
        let s = Store::new(2, 1);
        for i in 0..5 {
            s.transact(|t| {
                let key = (String::new(), format!("n{i}"));
                t.commit(
                    Kind::Namespace,
                    &key,
                    Some(json!({"metadata": {"name": key.1}})),
                )
            });
        }
        let rv = s.current_rv();
        assert!(s.subscribe(Kind::Namespace, Some(rv - 2)).is_ok());
        assert_eq!(
            s.subscribe(Kind::Namespace, Some(rv - 4))
                .err()
                .map(|e| e.code),
            Some(410)
        );
        let uid = s.transact(|t| t.new_uid());
        assert_eq!(uid.len(), 36);
        assert_eq!(&uid[14..15], "4");
    }
}
