//! The timeline, oldest first: the RestoreJob's own record, its Events, each writer's write
//! (managedFields), each field change and deletion the watch saw, and restorewatch's actions.

use super::audit_record::AuditRecord;
use super::story::{Fact, FactSource, Line};
use crate::analysis::history::order_time;
use crate::analysis::{HistoryEntry, HistoryWhat, RestoreView, Severity};
use jiff::Timestamp;

fn restore_fact(at: Option<Timestamp>, r: &RestoreView, what: Line) -> Option<Fact> {
    at.map(|t| Fact {
        time: Some(t),
        source: FactSource::Restore,
        object: Some(format!("RestoreJob/{}/{}", r.id.namespace, r.id.name)),
        writer: None,
        operation: None,
        what,
        warning: false,
    })
}

fn history_fact(h: &HistoryEntry) -> Fact {
    let object = Some(h.object.to_string());
    let fact = |source, writer: Option<&str>, operation: Option<&str>, what, warning| Fact {
        time: h.time,
        source,
        object: object.clone(),
        writer: writer.map(str::to_string),
        operation: operation.map(str::to_string),
        what,
        warning,
    };
    match &h.what {
        HistoryWhat::Event {
            type_,
            reason,
            message,
            count,
        } => {
            let mut line = Line::ours("")
                .val(&**type_)
                .say(" ")
                .val(&**reason)
                .say(": ")
                .prose(&**message);
            if *count > 1 {
                line = line.say(format!(" ({count} times)"));
            }
            fact(FactSource::Event, None, None, line, &**type_ == "Warning")
        }
        HistoryWhat::ManagedFields {
            manager,
            operation,
            subresource,
            fields,
        } => {
            let mut line = Line::ours("wrote");
            if let Some(sub) = subresource {
                line = line.say(" its ").val(&**sub);
            }
            if !fields.is_empty() {
                line = line.say(" (owns ");
                for (i, f) in fields.iter().enumerate() {
                    if i > 0 {
                        line = line.say(", ");
                    }
                    line = line.val(&**f);
                }
                line = line.say(")");
            }
            fact(
                FactSource::Write,
                Some(manager),
                Some(operation),
                line,
                false,
            )
        }
        HistoryWhat::Change {
            path,
            from,
            to,
            manager,
            operation,
        } => {
            let shown = |v: &Option<std::sync::Arc<str>>| {
                v.as_deref()
                    .map_or_else(|| "(absent)".to_string(), str::to_string)
            };
            let line = Line::ours("")
                .val(&**path)
                .say(": ")
                .val(shown(from))
                .say(" → ")
                .val(shown(to));
            fact(
                FactSource::Change,
                manager.as_deref(),
                operation.as_deref(),
                line,
                false,
            )
        }
        HistoryWhat::Deleted { uid, owners } => {
            let mut line = Line::ours("deleted (uid ").val(uid).say(")");
            if !owners.is_empty() {
                line = line.say(", owned by ").val(owners.join(", "));
            }
            fact(FactSource::Deleted, None, None, line, true)
        }
    }
}

fn action_fact(a: &AuditRecord) -> Fact {
    let mut line = Line::ours("restorewatch ")
        .val(&a.action)
        .say(" on ")
        .val(&a.target)
        .say(": ")
        .val(&a.operation);
    if !a.precondition.is_empty() && a.precondition != "none" {
        line = line.say(" (precondition ").val(&a.precondition).say(")");
    }
    line = line.say(" → ").val(&a.outcome);
    Fact {
        time: a.at(),
        source: FactSource::Action,
        object: None,
        // The server's name for the writer; the context, a local alias, says through which
        // kubeconfig entry.
        writer: Some(if a.context.is_empty() {
            a.by()
        } else {
            format!("{} @ {}", a.by(), a.context)
        }),
        operation: None,
        what: line,
        warning: a.severity() > Severity::Info,
    }
}

pub fn facts(r: &RestoreView, audit: &[&AuditRecord]) -> Vec<Fact> {
    let mut out: Vec<Fact> = Vec::new();
    out.extend(restore_fact(r.created, r, Line::ours("RestoreJob created")));
    out.extend(restore_fact(
        r.started_at,
        r,
        Line::ours("RestoreJob started"),
    ));
    out.extend(r.history.iter().map(history_fact));
    out.extend(audit.iter().map(|a| action_fact(a)));
    let mut end = Line::ours("RestoreJob ").val(&r.phase);
    if let Some(m) = &r.message {
        end = end.say(": ").prose(m);
    }
    out.extend(restore_fact(r.completed_at, r, end));
    // The history's own ordering (a whole second stands for its middle); stable, so facts of
    // one instant keep the order above.
    out.sort_by_key(|f| order_time(f.time));
    out
}
