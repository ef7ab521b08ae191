//! The terminal the status screen draws on: the alternate screen, entered by the broker when it
//! first draws, and left when the campaign ends. The broker's monitor leaves it when dropped
//! (its broker loop ends on the supervisor's SIGTERM, on Ctrl-C too); a broker that dies
//! without that (killed after the grace period) is covered by the supervising process, which
//! reads in shared memory whether the screen is still shown. Raw mode stays off: Ctrl-C is
//! still SIGINT, which stops the campaign as without the screen.

use std::{
    io::{self, Stdout, Write as _},
    sync::atomic::{AtomicBool, Ordering},
};

use ratatui::{
    crossterm::{
        cursor::{Hide, Show},
        execute,
        terminal::{EnterAlternateScreen, LeaveAlternateScreen},
    },
    prelude::CrosstermBackend,
    Frame, Terminal,
};

use crate::platform::fork_shared::ForkSharedFlag;

/// A flag in memory shared by the supervising process and everything it forks: the screen is
/// shown. Not shared until [`share_shown_flag`]; then the broker's copy is the same page.
static SHOWN: ForkSharedFlag = ForkSharedFlag::new();

/// Maps the shared flag; called in the supervising process before the campaign is forked.
pub fn share_shown_flag() {
    SHOWN.share();
}

fn shown() -> Option<&'static AtomicBool> {
    SHOWN.get()
}

/// Leaves the alternate screen and shows the cursor if the broker could not (the supervising
/// process calls it once the campaign's processes are gone).
pub fn restore_if_still_shown() {
    if shown().is_some_and(|s| s.swap(false, Ordering::SeqCst)) {
        let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
    }
}

/// The alternate screen, owned by the process that entered it.
pub struct Screen {
    terminal: Terminal<CrosstermBackend<Stdout>>,
    /// Forks carry a copy of this; only the process that entered the screen leaves it.
    owner: u32,
}

impl Screen {
    pub fn enter() -> io::Result<Self> {
        let terminal = Terminal::new(CrosstermBackend::new(io::stdout()))?;
        execute!(io::stdout(), EnterAlternateScreen, Hide)?;
        if let Some(flag) = shown() {
            flag.store(true, Ordering::SeqCst);
        }
        Ok(Self {
            terminal,
            owner: std::process::id(),
        })
    }

    pub fn draw(&mut self, render: impl FnOnce(&mut Frame)) {
        // A terminal that cannot be written to has nobody looking at it.
        let _ = self.terminal.draw(render);
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        if self.owner == std::process::id() {
            let _ = execute!(io::stdout(), LeaveAlternateScreen, Show);
            let _ = io::stdout().flush();
            if let Some(flag) = shown() {
                flag.store(false, Ordering::SeqCst);
            }
        }
    }
}
