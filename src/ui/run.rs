//! The terminal loop: set up the terminal (and always put it back), then wait on terminal
//! events, new frames and a 1 s clock tick; handle everything pending, draw at most once per
//! batch and only when something visible changed. Nothing here waits on the network.

use super::act;
use super::action_worker::{self, WorkerTx};
use super::app::{App, UiOptions};
use super::context::{self, Connector, Session};
use super::terminal_input::{self, Input};
use super::update::{Msg, event_to_msg, update};
use crate::pipeline::FrameRx;
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use jiff::Timestamp;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::path::PathBuf;
use std::time::Duration;
use tokio::time::{Instant, MissedTickBehavior};

/// Events handled per batch before drawing, so a flood of input cannot starve the screen.
const MAX_BATCH: usize = 256;

/// Whether the terminal is in the dashboard's mode. Restoring twice is not harmless: a second
/// "leave alternate screen" moves the cursor back up, and what follows (the panic message, the
/// shell's prompt) gets overwritten.
static TERMINAL_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Puts the terminal back, once: callable from the panic hook, the guard and the exit timer
/// alike.
pub(super) fn restore_terminal() {
    if !TERMINAL_TAKEN.swap(false, std::sync::atomic::Ordering::SeqCst) {
        return;
    }
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableMouseCapture,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

/// Owns the raw/alternate-screen state; dropping it restores the terminal on every exit path.
struct TerminalGuard;

impl TerminalGuard {
    fn enter() -> anyhow::Result<TerminalGuard> {
        enable_raw_mode()?;
        TERMINAL_TAKEN.store(true, std::sync::atomic::Ordering::SeqCst);
        let guard = TerminalGuard;
        execute!(std::io::stdout(), EnterAlternateScreen, EnableMouseCapture)?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal();
    }
}

/// A panic must leave a usable shell behind: restore first, then print the message and where
/// the log is.
fn install_panic_hook(log: Option<PathBuf>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore_terminal();
        tracing::error!(
            "panic: {info}\n{}",
            std::backtrace::Backtrace::force_capture()
        );
        previous(info);
        if let Some(p) = &log {
            // Not `eprintln!`: on a terminal that is gone it panics again, and a panic in the
            // hook aborts (exit 134).
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "restorewatch: the log is at {}",
                p.display()
            );
        }
    }));
}

/// The session was ended by a signal; the terminal is already restored. The process should exit
/// with `128 + signal`, as a shell reports a command killed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("ended by signal {0}")]
pub struct EndedBySignal(pub i32);

impl EndedBySignal {
    /// The terminal going away ends the program as its hang-up signal would (exit 129),
    /// whether or not the signal arrives.
    pub const HANGUP: EndedBySignal = EndedBySignal(1);

    pub fn exit_status(self) -> i32 {
        128 + self.0
    }
}

/// SIGTERM, SIGHUP, SIGQUIT and SIGINT (a `kill -INT`; Ctrl-C in raw mode is a key): left to
/// their default, they kill the process with the terminal still raw, in the alternate screen
/// and capturing the mouse, and a plain `sh` or an ssh session is left unusable. Caught, they
/// end the loop so the guard restores the terminal first.
#[cfg(unix)]
struct Signals(Vec<(i32, tokio::signal::unix::Signal)>);

#[cfg(unix)]
impl Signals {
    fn install() -> std::io::Result<Signals> {
        use tokio::signal::unix::{SignalKind, signal};
        let kinds = [
            SignalKind::terminate(),
            SignalKind::hangup(),
            SignalKind::quit(),
            SignalKind::interrupt(),
        ];
        let mut v = Vec::new();
        for k in kinds {
            v.push((k.as_raw_value(), signal(k)?));
        }
        Ok(Signals(v))
    }

    /// The number of the first signal to arrive.
    async fn recv(&mut self) -> i32 {
        let waits = self.0.iter_mut().map(|(n, s)| {
            let n = *n;
            Box::pin(async move {
                s.recv().await;
                n
            })
        });
        futures::future::select_all(waits).await.0
    }
}

#[cfg(not(unix))]
struct Signals;

#[cfg(not(unix))]
impl Signals {
    fn install() -> std::io::Result<Signals> {
        Ok(Signals)
    }
    async fn recv(&mut self) -> i32 {
        std::future::pending().await
    }
}

/// Handles what the terminal sent; `Some` when it is gone (read failing on a hung-up terminal,
/// the hang-up seen, the reader stopped).
fn on_input(app: &mut App, input: Option<Input>) -> anyhow::Result<Option<EndedBySignal>> {
    match input {
        Some(Input::Event(ev)) => {
            if let Some(m) = event_to_msg(app, &ev) {
                update(app, m);
            }
            Ok(None)
        }
        Some(Input::Failed(e)) if !terminal_input::hung_up() => {
            Err(anyhow::Error::new(e).context("reading the terminal"))
        }
        Some(Input::Failed(_) | Input::Gone) | None => {
            tracing::info!("the terminal is gone: ending");
            Ok(Some(EndedBySignal::HANGUP))
        }
    }
}

pub async fn run_tui(frames: FrameRx, opts: UiOptions) -> anyhow::Result<()> {
    run_loop(frames, None, opts).await
}

/// The dashboard on a kubeconfig context, which `:ctx NAME` switches in place.
pub async fn run_tui_live(
    session: Session,
    connector: Connector,
    opts: UiOptions,
) -> anyhow::Result<()> {
    let frames = session.frames.clone();
    run_loop(frames, Some((session, connector)), opts).await
}

async fn run_loop(
    mut frames: FrameRx,
    mut live: Option<(Session, Connector)>,
    opts: UiOptions,
) -> anyhow::Result<()> {
    install_panic_hook(opts.log_path.clone());
    // Before the terminal is taken, so that no signal finds it raw without a handler. The
    // signals are taken apart from the loop, so that one arriving in a long frame still ends
    // the program (within `terminal_input::GRACE`).
    let mut signals = Signals::install()?;
    let (signal_tx, mut signal_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut first = true;
        loop {
            let signo = signals.recv().await;
            if std::mem::take(&mut first) {
                terminal_input::end_soon(EndedBySignal(signo).exit_status());
            }
            if signal_tx.send(signo).is_err() {
                return;
            }
        }
    });
    let mut ended_by = None;
    let _guard = TerminalGuard::enter()?;
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))?;
    terminal.hide_cursor()?;
    terminal.clear()?;
    let mut painter = super::Painter::new();
    let size = terminal.size()?;
    let offset = opts.clock_offset;
    let clock = move || {
        Timestamp::now()
            .checked_add(offset)
            .unwrap_or_else(|_| Timestamp::now())
    };
    let mut app = App::new(opts, clock(), (size.width, size.height));
    let first = frames.borrow_and_update().clone();
    update(&mut app, Msg::Frame(first));
    // The action worker owns the client; its answers arrive as messages like keys and frames.
    let (worker_out, mut worker_msgs) = tokio::sync::mpsc::unbounded_channel::<Msg>();
    let mut worker: Option<WorkerTx> = app
        .opts
        .actions
        .clone()
        .map(|b| action_worker::spawn(b, worker_out.clone()));
    // A context switch starts a worker for the new context's client.
    let worker_out = live.as_ref().map(|_| worker_out);
    let (switch_tx, mut switch_rx) = tokio::sync::mpsc::unbounded_channel();
    // The switch in progress, abandoned when dropped (a later `:ctx`, the loop's end).
    let mut _connecting: Option<context::Connecting> = None;

    let mut events = terminal_input::spawn();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(MissedTickBehavior::Delay);
    let mut frames_open = true;
    let mut pacer = crate::pipeline::pace::Pacer::for_frames();
    let mut draw_at: Option<Instant> = None;

    loop {
        for req in act::take_requests(&mut app) {
            match &worker {
                Some(w) => {
                    if w.send(req).is_err() {
                        app.set_error("the action worker stopped: actions are unavailable");
                    }
                }
                None => tracing::warn!(?req, "an action request with no worker"),
            }
        }
        if let (Some(name), Some((_, connector))) = (app.context_request.take(), &live) {
            // Replacing it abandons the previous switch, plugin included.
            _connecting = Some(context::spawn_connect(connector, name, switch_tx.clone()));
        }
        if app.quit {
            break;
        }
        if app.dirty {
            let now = Instant::now();
            if !pacer.ready(now) {
                draw_at = Some(pacer.when(now));
            } else {
                {
                    if let Err(e) = painter.paint(&mut terminal, &app) {
                        if terminal_input::hung_up() {
                            ended_by = Some(EndedBySignal::HANGUP.0);
                            break;
                        }
                        return Err(anyhow::Error::new(e).context("drawing"));
                    }
                    if std::env::var_os("RESTOREWATCH_DEBUG_BUSY").is_some() {
                        // What the end-to-end test uses to stand for a frame or an analysis
                        // that takes long: the signal must still end the program.
                        std::thread::sleep(Duration::from_secs(3600));
                    }
                    app.dirty = false;
                    pacer.sent(now);
                    draw_at = None;
                    app.release_retired();
                    // A debugging switch, and what the end-to-end test uses to prove that a
                    // crash leaves a usable terminal and names the log.
                    if std::env::var_os("RESTOREWATCH_DEBUG_PANIC").is_some() {
                        panic!("RESTOREWATCH_DEBUG_PANIC is set: panicking after the first draw");
                    }
                }
            }
        }
        tokio::select! {
            input = events.recv() => if let Some(end) = on_input(&mut app, input)? {
                ended_by = Some(end.0);
                break;
            },
            changed = frames.changed(), if frames_open => match changed {
                Ok(()) => {
                    let f = frames.borrow_and_update().clone();
                    update(&mut app, Msg::Frame(f));
                }
                Err(_) => {
                    // The source is gone: keep showing the last data and say so.
                    frames_open = false;
                    tracing::warn!("frame source closed");
                    app.set_error("the data source stopped: this is the last data it sent");
                    app.dirty = true;
                }
            },
            Some(m) = worker_msgs.recv(), if worker.is_some() => update(&mut app, m),
            Some((name, result)) = switch_rx.recv(), if live.is_some() => {
                if let Some((session, _)) = &mut live
                    && context::install(&mut app, session, name, result)
                {
                    // The old session is dropped: its watches stopped. An action already
                    // running in the old worker finishes against the context it was planned on.
                    frames = session.frames.clone();
                    frames_open = true;
                    worker = session
                        .backend
                        .clone()
                        .zip(worker_out.clone())
                        .map(|(b, out)| action_worker::spawn(b, out));
                }
            }
            _ = tick.tick() => update(&mut app, Msg::Tick(clock())),
            Some(signo) = signal_rx.recv() => {
                tracing::info!(signo, "ended by a signal");
                ended_by = Some(signo);
                break;
            }
            _ = tokio::time::sleep_until(draw_at.unwrap_or_else(Instant::now)), if draw_at.is_some() => {}
        }
        // Everything already queued joins this batch, so a burst costs one draw.
        for _ in 0..MAX_BATCH {
            let Ok(input) = events.try_recv() else { break };
            if let Some(end) = on_input(&mut app, Some(input))? {
                ended_by = Some(end.0);
                break;
            }
        }
        if ended_by.is_some() {
            break;
        }
    }
    match ended_by {
        // The terminal may be gone: putting the cursor back is best effort (the guard too).
        Some(signo) => {
            if terminal.show_cursor().is_err() {
                // ratatui's drop would try again and `eprintln!` the failure, which panics on
                // a terminal that is gone; the guard restores what can be restored.
                std::mem::forget(terminal);
            }
            Err(EndedBySignal(signo).into())
        }
        None => {
            terminal.show_cursor()?;
            Ok(())
        }
    }
}
