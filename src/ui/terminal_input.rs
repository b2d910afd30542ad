//! The terminal's input, read on threads of their own so that the dashboard's loop never waits
//! on it, and the terminal going away seen without reading.
//!
//! crossterm's reader loops forever on a terminal at its end (`read` answering 0 or EIO), and
//! it did so inside the loop's task: a closed window, a dropped ssh session or a killed tmux
//! left the dashboard spinning at a full core, deaf to SIGHUP, SIGTERM and SIGINT. Now that
//! spin can only take the reader thread, and a second thread waits for the hang-up itself
//! (`poll` reports POLLHUP/POLLERR on a hung-up terminal without reading anything), which ends
//! the program.

use crossterm::event::Event;
use std::time::Duration;
use tokio::sync::mpsc;

/// What the loop hears from the terminal.
#[derive(Debug)]
pub enum Input {
    Event(Event),
    Failed(std::io::Error),
    /// The terminal hung up: nobody is looking and nothing more can be read.
    Gone,
}

/// Input events waiting for the loop; past this the reader waits (a paste flood cannot grow
/// memory).
const QUEUE: usize = 1024;

/// Time the loop gets to end by itself (restore the terminal, return its status) once told to
/// end, before the process is ended for it: a frame or an analysis in progress must not keep
/// a signal or a lost terminal waiting.
pub const GRACE: Duration = Duration::from_secs(3);

/// Starts the reader and the hang-up watch.
pub fn spawn() -> mpsc::Receiver<Input> {
    let (tx, rx) = mpsc::channel(QUEUE);
    let reader = tx.clone();
    let spawned = std::thread::Builder::new()
        .name("terminal-input".into())
        .spawn(move || {
            loop {
                let input = match crossterm::event::read() {
                    Ok(ev) => Input::Event(ev),
                    Err(e) => Input::Failed(e),
                };
                let failed = matches!(input, Input::Failed(_));
                if reader.blocking_send(input).is_err() || failed {
                    return;
                }
            }
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the terminal reader: {e}");
    }
    #[cfg(unix)]
    hangup::spawn(tx);
    rx
}

/// Ends the process with `status` after `GRACE`, the terminal restored first, unless the loop
/// has ended it by then.
pub fn end_soon(status: i32) {
    let spawned = std::thread::Builder::new()
        .name("end-soon".into())
        .spawn(move || {
            std::thread::sleep(GRACE);
            tracing::warn!(
                status,
                "the dashboard did not end within {GRACE:?}: ending it"
            );
            super::run::restore_terminal();
            crate::cluster::exec_plugin::kill_all();
            std::process::exit(status);
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the exit timer: {e}");
    }
}

/// Whether the terminal has hung up, asked without waiting (after a failed write).
pub fn hung_up() -> bool {
    #[cfg(unix)]
    {
        hangup::now()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

#[cfg(unix)]
mod hangup {
    use super::Input;
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    use std::io::IsTerminal;
    use std::os::fd::{AsFd, OwnedFd};
    use tokio::sync::mpsc;

    /// The terminal crossterm reads: stdin when it is one, else `/dev/tty` (so `demo </dev/null`
    /// still reads keys).
    enum Tty {
        Stdin,
        Opened(OwnedFd),
    }

    fn open() -> Option<Tty> {
        if std::io::stdin().is_terminal() {
            return Some(Tty::Stdin);
        }
        match std::fs::File::open("/dev/tty") {
            Ok(f) => Some(Tty::Opened(f.into())),
            Err(e) => {
                tracing::warn!("cannot open /dev/tty to watch for a hang-up: {e}");
                None
            }
        }
    }

    /// Polls for nothing but the conditions always reported: hang-up, error, a closed fd.
    fn wait(tty: &Tty, timeout: Option<&Timespec>) -> std::io::Result<bool> {
        let stdin = std::io::stdin();
        let fd = match tty {
            Tty::Stdin => stdin.as_fd(),
            Tty::Opened(fd) => fd.as_fd(),
        };
        let mut fds = [PollFd::from_borrowed_fd(fd, PollFlags::empty())];
        loop {
            match poll(&mut fds, timeout) {
                Ok(0) => return Ok(false),
                Ok(_) => {
                    let gone = PollFlags::HUP | PollFlags::ERR | PollFlags::NVAL;
                    return Ok(fds[0].revents().intersects(gone));
                }
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    pub fn spawn(tx: mpsc::Sender<Input>) {
        let Some(tty) = open() else { return };
        let spawned = std::thread::Builder::new()
            .name("terminal-hangup".into())
            .spawn(move || match wait(&tty, None) {
                Ok(true) => {
                    tracing::info!("the terminal hung up");
                    // The loop may be busy or its queue full: the exit does not wait for it.
                    super::end_soon(super::super::run::EndedBySignal::HANGUP.exit_status());
                    let _ = tx.blocking_send(Input::Gone);
                }
                Ok(false) => {}
                Err(e) => tracing::warn!("cannot watch the terminal for a hang-up: {e}"),
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the hang-up watch: {e}");
        }
    }

    pub fn now() -> bool {
        let zero = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // No terminal to open any more is gone too.
        open().is_none_or(|tty| wait(&tty, Some(&zero)).unwrap_or(false))
    }
}
