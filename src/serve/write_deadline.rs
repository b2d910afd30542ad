//! A connection whose answers must be written within a limit. A client that sends a request
//! and never reads would otherwise keep its connection, and the response it asked for, for as
//! long as it likes; after the limit the write fails and hyper drops the connection.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

pub struct WriteDeadline<S> {
    inner: S,
    limit: Duration,
    /// Armed by the first write of an answer; disarmed when the next request arrives.
    deadline: Option<Pin<Box<Sleep>>>,
    /// A write is waiting for the client to read: a request read meanwhile (pipelined) must
    /// not restart the clock of the answer still being written.
    blocked: bool,
}

impl<S> WriteDeadline<S> {
    pub fn new(inner: S, limit: Duration) -> Self {
        WriteDeadline {
            inner,
            limit,
            deadline: None,
            blocked: false,
        }
    }

    fn check(&mut self, cx: &mut Context<'_>) -> io::Result<()> {
        let limit = self.limit;
        let d = self
            .deadline
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        // Polling the timer also registers the task, so a write blocked for good still ends.
        if d.as_mut().poll(cx).is_ready() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("the client did not read the answer within {limit:?}"),
            ));
        }
        Ok(())
    }

    fn note<T>(&mut self, r: &Poll<T>) {
        self.blocked = r.is_pending();
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let r = Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(r, Poll::Ready(Ok(()))) && buf.filled().len() > before && !self.blocked {
            self.deadline = None;
        }
        r
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.check(cx)?;
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.note(&r);
        r
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.check(cx)?;
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.note(&r);
        r
    }

    /// Passed on: with vectored writes hyper queues the shared body instead of copying it.
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.deadline.is_some() {
            self.check(cx)?;
        }
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.note(&r);
        r
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
