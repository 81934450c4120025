//! What the import commands (`plexus import`, `plexus import graphar`) share: how they show
//! progress on stderr and the summary they end with.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::path::PathBuf;

/// What a finished import did.
#[derive(Debug, Clone)]
pub struct ImportSummary {
    pub nodes: u64,
    pub relationships: u64,
    pub bad_rows: u64,
    pub report: Option<PathBuf>,
    pub seconds: f64,
}

impl std::fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "imported {} nodes, {} relationships, skipped {} bad rows in {:.2} s",
            self.nodes, self.relationships, self.bad_rows, self.seconds
        )?;
        if let (Some(report), true) = (&self.report, self.bad_rows > 0) {
            write!(f, " (listed in {})", report.display())?;
        }
        Ok(())
    }
}

/// How progress is shown on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// Progress bars (stderr is a terminal).
    Bars,
    /// One line per file.
    Lines,
}

impl ProgressMode {
    pub fn for_stderr() -> ProgressMode {
        if std::io::stderr().is_terminal() {
            ProgressMode::Bars
        } else {
            ProgressMode::Lines
        }
    }
}

/// A progress bar of `total` units (`units`: indicatif's `{pos}/{len}` or
/// `{bytes}/{total_bytes}`) labelled `prefix`, with the rate or state in its message.
pub(crate) fn bar(total: u64, units: &str, prefix: &'static str) -> ProgressBar {
    let bar = ProgressBar::new(total);
    let template = format!("{{prefix:>13}} [{{bar:30}}] {units} {{msg}} ETA {{eta}}");
    let style = ProgressStyle::with_template(&template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.set_prefix(prefix);
    bar
}
