//! The status screen, in the spirit of AFL++'s: boxes of numbers from one [`Snapshot`], a line
//! per client, and the latest findings with the commands that reproduce them. Pure rendering
//! into a ratatui frame (the terminal itself is `terminal.rs`'s), so a test can draw it.

use std::time::Duration;

use ratatui::{
    layout::{Constraint, Layout, Rect},
    style::Stylize,
    text::{Line, Span},
    widgets::{Block, Paragraph},
    Frame,
};

use super::stats::{format_duration, Snapshot};

/// One client's numbers, as the broker last heard them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ClientLine {
    pub id: u32,
    pub execs: u64,
    pub execs_per_sec: f64,
    pub corpus: u64,
    /// Edges found and the map's size, when the client reported them.
    pub edges: Option<(u64, u64)>,
}

/// Everything one frame shows.
pub struct View<'a> {
    pub snap: &'a Snapshot,
    /// What the campaign runs: mode and comparison solving.
    pub label: &'a str,
    pub clients: &'a [ClientLine],
    /// The latest finding notices, oldest first (only the last ones that fit are shown).
    pub findings: &'a [String],
    /// Now, in seconds since the epoch (for the times since the last finds).
    pub now: u64,
}

/// Clients beyond this many are summed up in one line.
const MAX_CLIENT_LINES: usize = 8;

pub fn render(frame: &mut Frame, view: &View) {
    let shown_clients = view.clients.len().clamp(1, MAX_CLIENT_LINES + 1) as u16;
    let [title, top, middle, clients, findings] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(7),
        Constraint::Length(7),
        Constraint::Length(shown_clients + 2),
        Constraint::Min(3),
    ])
    .areas(frame.area());
    let heading = format!("lafuzz: {}", view.label);
    frame.render_widget(Line::from(heading).bold().centered(), title);
    let [timing, results] = halves(top);
    boxed(frame, timing, "process timing", timing_lines(view));
    boxed(frame, results, "overall results", result_lines(view.snap));
    let [found, speed] = halves(middle);
    boxed(frame, found, "findings", finding_counts(view.snap));
    boxed(frame, speed, "speed and memory", speed_lines(view.snap));
    boxed(frame, clients, "clients", client_lines(view.clients));
    let room = usize::from(findings.height.saturating_sub(2));
    boxed(
        frame,
        findings,
        "latest findings",
        latest(view.findings, room),
    );
}

fn halves(area: Rect) -> [Rect; 2] {
    Layout::horizontal([Constraint::Percentage(50); 2]).areas(area)
}

fn boxed(frame: &mut Frame, area: Rect, title: &str, lines: Vec<Line<'static>>) {
    let block = Block::bordered().title(format!(" {title} ").bold());
    frame.render_widget(Paragraph::new(lines).block(block), area);
}

/// `key : value`, the keys right-aligned as AFL++'s.
fn pair(key: &str, value: String) -> Line<'static> {
    Line::from(vec![
        Span::raw(format!("{key:>16} : ")),
        Span::raw(value).bold(),
    ])
}

/// How long ago `when` (seconds since the epoch; 0: never) was.
fn ago(now: u64, when: u64) -> String {
    if when == 0 {
        "none yet".to_string()
    } else {
        format!(
            "{} ago",
            format_duration(Duration::from_secs(now.saturating_sub(when)))
        )
    }
}

fn timing_lines(view: &View) -> Vec<Line<'static>> {
    let snap = view.snap;
    vec![
        pair("run time", format_duration(snap.run_time)),
        pair("last new find", ago(view.now, snap.last_find)),
        pair("last uniq crash", ago(view.now, snap.last_crash)),
        pair("cycles done", snap.cycles_done.to_string()),
        pair("exec timeout", format!("{} ms", snap.exec_timeout_ms)),
    ]
}

fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        100.0 * part as f64 / whole as f64
    }
}

fn result_lines(snap: &Snapshot) -> Vec<Line<'static>> {
    let density = percent(snap.edges_found, snap.total_edges);
    let stability = snap
        .stability
        .map_or_else(|| "n/a".to_string(), |s| format!("{s:.2}%"));
    vec![
        pair("corpus count", snap.corpus_count.to_string()),
        pair(
            "edges found",
            format!("{}/{}", snap.edges_found, snap.total_edges),
        ),
        pair("map density", format!("{density:.2}%")),
        pair("stability", stability),
    ]
}

fn finding_counts(snap: &Snapshot) -> Vec<Line<'static>> {
    vec![
        pair(
            "crashes",
            format!(
                "{} (+{} flaky)",
                snap.saved_crashes, snap.saved_flaky_crashes
            ),
        ),
        pair("hangs", snap.saved_hangs.to_string()),
        pair("ooms", snap.saved_ooms.to_string()),
        pair("leaks", snap.saved_leaks.to_string()),
        pair("client restarts", snap.client_restarts.to_string()),
    ]
}

fn speed_lines(snap: &Snapshot) -> Vec<Line<'static>> {
    let seconds = snap.run_time.as_secs_f64();
    let average = if seconds > 0.0 {
        snap.execs_done as f64 / seconds
    } else {
        0.0
    };
    vec![
        pair("total execs", snap.execs_done.to_string()),
        pair("exec speed", format!("{:.0}/s", snap.execs_per_sec)),
        pair("average speed", format!("{average:.0}/s")),
        pair("peak rss", format!("{} MiB", snap.peak_rss_mb)),
        pair("cmplog tokens", snap.cmplog_tokens.to_string()),
    ]
}

fn client_lines(clients: &[ClientLine]) -> Vec<Line<'static>> {
    if clients.is_empty() {
        return vec![Line::from("waiting for the clients' first report")];
    }
    let mut lines: Vec<Line<'static>> = clients
        .iter()
        .take(MAX_CLIENT_LINES)
        .map(|c| {
            let edges = c
                .edges
                .map_or_else(|| "-".to_string(), |(hit, all)| format!("{hit}/{all}"));
            Line::from(format!(
                "client {:>3} | execs {:>12} | {:>8.0}/s | corpus {:>6} | edges {edges}",
                c.id, c.execs, c.execs_per_sec, c.corpus
            ))
        })
        .collect();
    if clients.len() > MAX_CLIENT_LINES {
        let more = clients.len() - MAX_CLIENT_LINES;
        lines.push(Line::from(format!("... and {more} more")));
    }
    lines
}

/// The last `room` notice lines (a finding's is two: where it is saved, how to reproduce it).
fn latest(findings: &[String], room: usize) -> Vec<Line<'static>> {
    if findings.is_empty() {
        return vec![Line::from("none yet")];
    }
    let start = findings.len().saturating_sub(room);
    findings[start..]
        .iter()
        .map(|l| Line::from(l.clone()))
        .collect()
}

#[cfg(test)]
mod tests;
