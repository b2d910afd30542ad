//! The `:` command line: what Tab completes (commands, namespaces from the data, contexts from
//! the kubeconfig) and what each command does.

use super::app::{App, CommandLine, Mode, Screen};
use super::keys::COMMANDS;
use super::update::{clamp_current, goto};

pub fn current_text(app: &App) -> String {
    match &app.mode {
        Mode::Command(cl) => cl.text.clone(),
        _ => String::new(),
    }
}

/// Tab: a single candidate completes; several cycle on every further Tab.
pub fn complete(cl: &mut CommandLine, fresh: Vec<String>) {
    if let Some((cands, i)) = &mut cl.completion
        && cands.get(*i) == Some(&cl.text)
        && cands.len() > 1
    {
        *i = (*i + 1) % cands.len();
        cl.text = cands[*i].clone();
        return;
    }
    match fresh.len() {
        0 => cl.completion = None,
        _ => {
            cl.text = fresh[0].clone();
            cl.completion = Some((fresh, 0));
        }
    }
}

/// Full command lines that extend `text`.
pub fn completions(app: &App, text: &str) -> Vec<String> {
    if let Some(prefix) = text.strip_prefix("ns ") {
        let mut names: Vec<String> = vec!["all".into()];
        if let Some(f) = &app.shown {
            names.extend(
                f.snapshot
                    .objects
                    .namespaces
                    .iter()
                    .map(|n| n.meta.name.to_string()),
            );
            names.extend(f.report.restores.iter().map(|r| r.id.namespace.clone()));
        }
        names.sort();
        names.dedup();
        return names
            .into_iter()
            .filter(|n| n.starts_with(prefix))
            .map(|n| format!("ns {n}"))
            .collect();
    }
    if let Some(prefix) = text.strip_prefix("ctx ") {
        return app
            .opts
            .contexts
            .iter()
            .filter(|c| c.starts_with(prefix))
            .map(|c| format!("ctx {c}"))
            .collect();
    }
    COMMANDS
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| c.starts_with(text))
        .map(|c| {
            if matches!(c, "ns" | "ctx") {
                format!("{c} ")
            } else {
                c.to_string()
            }
        })
        .collect()
}

pub fn run(app: &mut App, text: &str) {
    let (cmd, arg) = match text.split_once(char::is_whitespace) {
        Some((c, a)) => (c, a.trim()),
        None => (text, ""),
    };
    match cmd {
        "" => {}
        "restores" | "restore" | "rs" => goto(app, Screen::Restores),
        "findings" | "finding" => goto(app, Screen::Findings),
        "orig" | "origs" => goto(app, Screen::Orig),
        "events" | "event" | "ev" => goto(app, Screen::Events),
        "backups" | "backup" => goto(app, Screen::Backups),
        "help" => goto(app, Screen::Help { scroll: 0 }),
        "q" | "q!" | "quit" => app.quit = true,
        "ns" => match arg {
            "" => app.set_error("usage: :ns NAME or :ns all"),
            "all" | "-A" => {
                app.namespace = None;
                app.set_status("all namespaces");
                clamp_current(app);
            }
            ns => {
                app.namespace = Some(ns.to_string());
                app.set_status(format!("namespace {ns}"));
                clamp_current(app);
            }
        },
        "ctx" | "context" => switch_context(app, arg),
        other => app.set_error(format!("unknown command :{other} (tab lists the commands)")),
    }
}

/// `:ctx NAME`: checks the name against the kubeconfig, then leaves the connection to the
/// terminal loop (it must not block here).
fn switch_context(app: &mut App, name: &str) {
    let Some(current) = app.opts.context.clone() else {
        app.set_error("this session does not watch a kubeconfig context (demo or dump files): nothing to switch");
        return;
    };
    if name.is_empty() {
        app.set_error(format!(
            "usage: :ctx NAME (tab completes); showing {current}"
        ));
    } else if !app.opts.contexts.iter().any(|c| c == name) {
        app.set_error(format!(
            "no context {name} in the kubeconfig (tab lists: {})",
            app.opts.contexts.join(", ")
        ));
    } else if name == current && app.switching.is_none() {
        app.set_status(format!("already showing context {name}"));
    } else {
        app.context_request = Some(name.to_string());
        app.switching = Some(name.to_string());
        app.set_status(format!("connecting to context {name}…"));
    }
}
