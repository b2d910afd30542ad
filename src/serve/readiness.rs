//! Whether `serve` is watching the whole cluster, from the newest frame alone. A frame exists
//! as soon as every kind has *tried* to list, so it is not proof of anything: a kind that was
//! refused, forbidden or timed out before its first list is blind, and an empty report built
//! on it would read as an all-clear. Pure, so that `/readyz`, `/report` and
//! `restorewatch_ready` cannot disagree.

use crate::cluster::SyncState;
use crate::model::snapshot::Snapshot;
use crate::pipeline::frame::Frame;
use jiff::Timestamp;

/// One watched resource that is not being watched right now.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Blind {
    /// kubectl's name for it, as in `restorewatch_watch_up{resource=…}`.
    pub resource: String,
    /// Since when it has been down; `None` for a 403, whose start is not recorded.
    pub since: Option<Timestamp>,
    pub error: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// No frame yet: some first list has not ended (answered, failed or timed out).
    Listing,
    /// These resources have never been listed completely: nothing can be said about them.
    NotListed(Vec<Blind>),
    /// Everything was listed once, but these watches are down: the report is as of `since`.
    Stale(Vec<Blind>),
    Ready,
}

impl Readiness {
    pub fn of(frame: Option<&Frame>) -> Readiness {
        match frame {
            None => Readiness::Listing,
            Some(f) => of_snapshot(&f.snapshot),
        }
    }

    pub fn is_ready(&self) -> bool {
        *self == Readiness::Ready
    }

    /// Whether a report can be given at all (perhaps stale).
    pub fn has_report(&self) -> bool {
        matches!(self, Readiness::Ready | Readiness::Stale(_))
    }

    /// The watches that are down now, whether or not they ever listed.
    pub fn blind(&self) -> &[Blind] {
        match self {
            Readiness::NotListed(b) | Readiness::Stale(b) => b,
            Readiness::Listing | Readiness::Ready => &[],
        }
    }

    /// What `/readyz` says, one sentence naming the source.
    pub fn text(&self, source: &str) -> String {
        let list = |b: &[Blind]| {
            b.iter()
                .map(|b| match b.since {
                    Some(t) => format!("{} (down since {t}): {}", b.resource, b.error),
                    None => format!("{}: {}", b.resource, b.error),
                })
                .collect::<Vec<_>>()
                .join("; ")
        };
        let text = match self {
            Readiness::Ready => format!("ready: {source}"),
            Readiness::Listing => {
                format!("not ready: still listing every watched resource of {source}")
            }
            Readiness::NotListed(b) => format!(
                "not ready: watched resources of {source} never listed, nothing is known of them: {}",
                list(b)
            ),
            Readiness::Stale(b) => format!(
                "not ready: stale: watches of {source} down, the report is as of when they went down: {}",
                list(b)
            ),
        };
        crate::text::one_line_owned(text)
    }
}

fn of_snapshot(s: &Snapshot) -> Readiness {
    let mut never = Vec::new();
    let mut down = Vec::new();
    for (kind, h) in &s.health {
        // `last_event` is set by a complete list and by every change after it.
        let listed = h.last_event.is_some();
        let (since, error) = match &h.state {
            SyncState::Synced | SyncState::NotInstalled | SyncState::FromFile => continue,
            SyncState::Syncing => (None, "still listing".to_string()),
            SyncState::Resyncing { since, error } | SyncState::Failed { since, error } => {
                (Some(*since), error.clone())
            }
            SyncState::Forbidden { error } => (None, error.clone()),
        };
        let b = Blind {
            resource: kind.info().resource_name(),
            since,
            error,
        };
        if listed { down.push(b) } else { never.push(b) }
    }
    if !never.is_empty() {
        // A kind never listed outweighs one that is merely stale: the report misses it whole.
        never.extend(down);
        Readiness::NotListed(never)
    } else if !down.is_empty() {
        Readiness::Stale(down)
    } else {
        Readiness::Ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::KindHealth;
    use crate::model::Kind;

    fn snapshot(states: &[(Kind, SyncState, bool)]) -> Snapshot {
        let mut s = Snapshot::default();
        for (k, st, listed) in states {
            s.health.insert(
                *k,
                KindHealth {
                    state: st.clone(),
                    last_event: listed.then(Timestamp::now),
                },
            );
        }
        s
    }

    fn failed(error: &str) -> SyncState {
        SyncState::Resyncing {
            since: "2026-12-01T10:00:00Z".parse().expect("time"),
            error: error.into(),
        }
    }

    #[test]
    fn an_absent_api_counts_as_listed_a_403_or_a_failed_first_list_does_not() {
        let ok = snapshot(&[
            (Kind::RestoreJob, SyncState::Synced, true),
            (Kind::DataVolume, SyncState::NotInstalled, false),
        ]);
        assert_eq!(of_snapshot(&ok), Readiness::Ready);
        let forbidden = snapshot(&[
            (Kind::RestoreJob, SyncState::Synced, true),
            (
                Kind::PersistentVolume,
                SyncState::Forbidden {
                    error: "403".into(),
                },
                false,
            ),
        ]);
        let r = of_snapshot(&forbidden);
        assert!(matches!(&r, Readiness::NotListed(b) if b[0].resource == "persistentvolumes"));
        assert!(!r.has_report());
        let refused = snapshot(&[(Kind::RestoreJob, failed("connection refused"), false)]);
        let r = of_snapshot(&refused);
        assert!(!r.is_ready() && !r.has_report());
        assert!(
            r.text("ctx").contains("connection refused"),
            "{}",
            r.text("ctx")
        );
    }

    #[test]
    fn a_watch_down_after_its_list_is_stale_with_since_when() {
        let s = snapshot(&[
            (Kind::RestoreJob, SyncState::Synced, true),
            (Kind::PersistentVolumeClaim, failed("refused"), true),
        ]);
        let r = of_snapshot(&s);
        assert!(!r.is_ready() && r.has_report());
        let text = r.text("context prod");
        assert!(
            text.contains("stale")
                && text
                    .contains("persistentvolumeclaims (down since 2026-12-01T10:00:00Z): refused"),
            "{text}"
        );
    }

    #[test]
    fn the_text_carries_no_control_characters_from_an_error() {
        let s = snapshot(&[(Kind::RestoreJob, failed("bad\x1b[2J\u{9b}31m\nnews"), false)]);
        let text = of_snapshot(&s).text("ctx");
        assert!(
            !text.chars().any(crate::text::is_terminal_control),
            "{text:?}"
        );
    }
}
