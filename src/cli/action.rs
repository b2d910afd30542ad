//! `restorewatch action`: the same guarded repairs as the dashboard's `a`, for scripts and
//! terminals without the TUI. Without `--yes` it only shows the plan.

use super::exit;
use crate::actions::execute::{Executor, Outcome, StepEvent};
use crate::actions::{ActionRequest, Plan, Target, audit, rbac};
use crate::analysis::ActionKind;
use crate::args::ClusterArgs;
use clap::{ArgGroup, Args};
// Plans and results quote names, messages and API errors from the cluster: every line this
// command prints goes through the terminal sanitizer.
use crate::{say as println, say_err as eprintln};

#[derive(Debug, Clone, Args)]
#[command(group(ArgGroup::new("target").required(true).args(["restore", "pvc", "restore_job"])))]
#[command(
    after_help = "Actions:\n  resume-rename   keep a disk as <pvc>-orig-<hash>, or finish a rename the controller left half done\n  \
reclaim-orig    set the PV's reclaim policy back, then delete an -orig PVC\n  fix-servername  set the Cluster's archive serverName to the app's newServerName\n  \
resume-release  resume HelmReleases a finished restore left suspended\n  \
restart-restore restore again under a new RestoreJob name (free -orig names, no hash collision, clean preflight)\n\n\
Exit status: 0 done (or, without --yes, plan shown), 1 refused or stopped (or the PV controller had not\n\
bound the -orig PVC when the bounded wait ended), 2 bad usage or cluster unreachable.\n\
Every write is recorded in $XDG_STATE_HOME/restorewatch/audit.jsonl and as an Event on the RestoreJob."
)]
pub struct ActionArgs {
    /// resume-rename | reclaim-orig | fix-servername | resume-release | restart-restore
    #[arg(value_parser = parse_action)]
    pub name: ActionKind,
    /// The RestoreJob, as NAMESPACE/NAME
    #[arg(long, value_name = "NS/NAME")]
    pub restore: Option<String>,
    /// The RestoreJob, as NAMESPACE/NAME (the same as --restore)
    #[arg(value_name = "NS/NAME", conflicts_with_all = ["restore", "pvc"])]
    pub restore_job: Option<String>,
    /// The PVC, as NAMESPACE/NAME (reclaim-orig: the -orig PVC, repeatable to reclaim several in
    /// turn, each by its own plan; resume-rename: a disk or its -orig PVC)
    #[arg(long, value_name = "NS/NAME")]
    pub pvc: Vec<String>,
    /// reclaim-orig: the reclaim policy to restore when none was recorded; resume-rename: the
    /// PV's original policy when an earlier failed attempt left it unknowable
    #[arg(long, value_parser = ["Delete", "Retain"])]
    pub policy: Option<String>,
    /// reclaim-orig: delete the -orig PVC even though it may hold the only good copy of the
    /// disk (its restore failed, or the restored disk is missing or its download failed)
    #[arg(long)]
    pub discard_only_copy: bool,
    /// restart-restore: restore again while the old RestoreJob still runs, two restores of one
    /// application that the controller does not lock against each other
    #[arg(long)]
    pub leave_old_running: bool,
    /// Show the plan and write nothing (the default without --yes)
    #[arg(long, conflicts_with = "yes")]
    pub dry_run: bool,
    /// Execute the plan without asking
    #[arg(long)]
    pub yes: bool,
    #[command(flatten)]
    pub cluster: ClusterArgs,
}

fn parse_action(s: &str) -> Result<ActionKind, String> {
    ActionKind::parse(s).ok_or_else(|| {
        format!(
            "unknown action {s:?}; one of: {}",
            ActionKind::ALL
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

pub fn print_plan(p: &Plan) {
    println!("{} on {}", p.request.action, p.request.target);
    if p.ops.is_empty() {
        let what = if p.waits.is_empty() { "do" } else { "write" };
        println!("  nothing to {what}: {}", p.outcome);
    }
    for (i, op) in p.ops.iter().enumerate() {
        println!("  {}. {}", i + 1, op.describe());
        println!("     precondition: {}", op.precondition());
        println!("     protects:     {}", op.protects());
    }
    for n in &p.notes {
        println!("  note: {n}");
    }
    if !p.ops.is_empty() {
        println!("  afterwards: {}", p.outcome);
    }
}

pub async fn run(args: ActionArgs) -> anyhow::Result<i32> {
    let restore = args.restore.as_ref().or(args.restore_job.as_ref());
    let targets: Result<Vec<Target>, String> = match (restore, &args.pvc[..]) {
        (Some(r), _) => Target::parse("restore", r).map(|t| vec![t]),
        (_, [one]) => Target::parse("pvc", one).map(|t| vec![t]),
        (_, many @ [_, _, ..]) if args.name != ActionKind::ReclaimOrig => Err(format!(
            "{} takes one --pvc; only reclaim-orig reclaims several ({} given)",
            args.name,
            many.len()
        )),
        // One policy for several volumes would be a guess for each: a PVC without a recorded
        // policy is reclaimed alone, with the policy chosen for it.
        (_, [_, _, ..]) if args.policy.is_some() => Err(
            "--policy applies to one PVC: reclaim the PVCs without a recorded policy one at a time"
                .into(),
        ),
        (_, many @ [_, _, ..]) => many.iter().map(|p| Target::parse("pvc", p)).collect(),
        _ => Err("--restore or --pvc is required".into()),
    };
    // A consent given to one action must not silently ride along with another.
    let targets = targets.and_then(|t| {
        if args.leave_old_running && args.name != ActionKind::RestartRestore {
            Err(format!(
                "--leave-old-running applies to restart-restore, not {}",
                args.name
            ))
        } else {
            Ok(t)
        }
    });
    let targets = match targets {
        Ok(t) => t,
        Err(e) => {
            eprintln!("restorewatch: {e}");
            return Ok(exit::USAGE);
        }
    };
    let conn = match crate::args::connect_or_exit(&args.cluster).await {
        Ok(c) => c,
        Err(code) => return Ok(code),
    };
    // Several PVCs: each in turn, exactly as alone; the worst result is the exit status.
    let mut status = exit::OK;
    let many = targets.len() > 1;
    let (mut ok, mut not) = (0, 0);
    for target in targets {
        let code = run_one(&args, &conn, target).await?;
        if code == exit::OK {
            ok += 1;
        } else {
            not += 1;
        }
        status = status.max(code);
    }
    if many {
        println!("{ok} of {} PVCs done, {not} refused or stopped", ok + not);
    }
    Ok(status)
}

async fn run_one(
    args: &ActionArgs,
    conn: &crate::cluster::client::Connection,
    target: Target,
) -> anyhow::Result<i32> {
    let req = ActionRequest {
        action: args.name,
        target,
        policy: args.policy.clone(),
        discard_only_copy: args.discard_only_copy,
        leave_running: args.leave_old_running,
    };
    // The preview comes from fresh reads too: there is no watch cache in the CLI.
    let the_plan = match crate::actions::execute::plan_fresh(&conn.client, &req).await? {
        Ok(p) => p,
        Err(r) => {
            println!("{} on {}: refused: {}", req.action, req.target, r.reason);
            return Ok(exit::FINDINGS);
        }
    };
    print_plan(&the_plan);
    if the_plan.is_settled() {
        return Ok(exit::OK);
    }
    let denied = rbac::check(&conn.client, &the_plan.ops)
        .await
        .unwrap_or_else(|e| {
            eprintln!("restorewatch: cannot check permissions ({e}); the server will decide");
            Vec::new()
        });
    if !denied.is_empty() {
        for d in &denied {
            println!("  forbidden: {d}");
        }
        return Ok(exit::FINDINGS);
    }
    // Nothing to write but a bind to wait for: waiting only reads, so it needs no --yes; a dry
    // run still only shows the plan.
    if args.dry_run || (!args.yes && !the_plan.ops.is_empty()) {
        println!("(dry run: nothing written; add --yes to execute)");
        return Ok(exit::OK);
    }
    let ex = Executor {
        client: conn.client.clone(),
        user: conn.user.clone(),
        context: conn.context.clone(),
        server: conn.cluster_url.clone(),
        audit: Some(audit::audit_path()),
        events: true,
        max_writes: None,
        bind_wait: crate::actions::execute::BIND_WAIT,
    };
    let outcome = ex
        .execute(&the_plan, |e| match e {
            StepEvent::Start(op) => println!("  ... {}", op.describe()),
            StepEvent::Done(op) => println!("  ok  {}", op.describe()),
            StepEvent::Conflict(_, msg) => println!("  409 {msg}"),
            StepEvent::Waiting { pvc, waited_secs } => println!(
                "  ... waiting for the PV controller to bind {pvc} ({waited_secs} s; it binds on its resync, up to ~15 s)"
            ),
            StepEvent::RecordFailed(msg) => eprintln!("restorewatch: {msg}"),
            StepEvent::Rejudged(_, proof) => println!("  ok  re-read just before the delete: {proof}"),
        })
        .await;
    match outcome {
        Outcome::Completed { writes } => {
            println!("done: {writes} writes; {}", the_plan.outcome);
            Ok(exit::OK)
        }
        Outcome::Interrupted { writes } => {
            println!("interrupted after {writes} writes; run again to resume");
            Ok(exit::FINDINGS)
        }
        Outcome::Unbound {
            writes,
            pending,
            waited_secs,
        } => {
            println!(
                "done: {writes} writes; but the PV controller had not bound {} after {waited_secs} s (it normally does within ~15 s): check it; a rerun writes nothing and waits again",
                pending.join(", ")
            );
            Ok(exit::FINDINGS)
        }
        Outcome::Stopped { writes, reason } => {
            println!("stopped after {writes} writes: {reason}");
            println!("run the same command again to resume from the current state");
            Ok(exit::FINDINGS)
        }
    }
}
