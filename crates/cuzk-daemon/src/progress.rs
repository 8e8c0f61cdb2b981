//! Progress of local work that takes minutes at 32 GiB (`cuzk paramgen`, `cuzk pce extract`,
//! the point cache `cuzk prove` writes): on a terminal a bar (or, where the work has no steps,
//! a spinner) with the elapsed time; off one the plain log lines each step writes anyway.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

use cuzk_daemon::config::LogFormat;
use cuzk_daemon::logging;

/// The `setup` events of one `cuzk paramgen`: the generator's seven steps and the write.
const SETUP_STEPS: u64 = 8;

/// Shows `setup` events (`step = …`) as a bar of [`SETUP_STEPS`] on a terminal; elsewhere logs
/// them as lines. Warnings are logged either way.
pub fn paramgen() {
    if !std::io::stderr().is_terminal() {
        logging::init(
            LogFormat::Text,
            "warn,cuzk_groth16::generator=info,cuzk::local=info",
        );
        return;
    }
    let bar = ProgressBar::new(SETUP_STEPS).with_style(style(
        "{elapsed_precise} [{bar:30}] {pos}/{len} setup steps, last: {msg}",
    ));
    bar.set_message("(recording the circuit)");
    bar.enable_steady_tick(Duration::from_millis(500));
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(EnvFilter::new("warn")),
        )
        .with(Steps(bar))
        .try_init();
}

/// `cuzk prove`'s log (`level`), and on a terminal a bar of the point cache written beside the
/// first proofs (its `debug` progress events; the engine waits for the write when it stops).
pub fn prove(level: &str) {
    if !std::io::stderr().is_terminal() {
        return logging::init(LogFormat::Text, level);
    }
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter),
        )
        .with(Bytes::new(ProgressBar::hidden()).with_filter(EnvFilter::new(CACHE_PROGRESS)))
        .try_init();
}

/// Where the point cache's progress events come from.
const CACHE_PROGRESS: &str = "cuzk_groth16::params::cache=debug";

/// A spinner with the elapsed time while `what` runs, on a terminal only.
pub fn spinner(what: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner().with_style(style("{spinner} {elapsed_precise} {msg}"));
    bar.set_message(what.to_string());
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

/// A byte bar, drawn from the first event that carries `written_bytes` and `total_bytes`.
struct Bytes(ProgressBar);

impl Bytes {
    fn new(bar: ProgressBar) -> Self {
        bar.set_style(style(
            "{elapsed_precise} [{bar:30}] {bytes}/{total_bytes} point cache written",
        ));
        Bytes(bar)
    }
}

impl<S: tracing::Subscriber> Layer<S> for Bytes {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut f = ByteFields::default();
        event.record(&mut f);
        if let (Some(written), Some(total)) = (f.written, f.total) {
            // Hidden until a cache is written at all: most runs write none.
            if self.0.length().is_none() {
                self.0.set_draw_target(ProgressDrawTarget::stderr());
            }
            self.0.set_length(total);
            self.0.set_position(written);
            if written >= total {
                self.0.finish();
            }
        }
    }
}

#[derive(Default)]
struct ByteFields {
    written: Option<u64>,
    total: Option<u64>,
}

impl Visit for ByteFields {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "written_bytes" => self.written = Some(value),
            "total_bytes" => self.total = Some(value),
            _ => {}
        }
    }
    fn record_debug(&mut self, _: &Field, _: &dyn std::fmt::Debug) {}
}

/// Advances the bar at every event that carries a `step` field.
struct Steps(ProgressBar);

impl<S: tracing::Subscriber> Layer<S> for Steps {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        let mut step = StepField(None);
        event.record(&mut step);
        if let Some(name) = step.0 {
            self.0.inc(1);
            self.0.set_message(name);
            if self.0.position() >= SETUP_STEPS {
                self.0.finish();
            }
        }
    }
}

struct StepField(Option<String>);

impl Visit for StepField {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "step" {
            self.0 = Some(value.to_string());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "step" {
            self.0 = Some(format!("{value:?}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte bar follows the progress events' fields and ignores other events.
    #[test]
    fn the_byte_bar_follows_written_and_total() {
        let bar = ProgressBar::hidden();
        let subscriber = tracing_subscriber::registry().with(Bytes::new(bar.clone()));
        tracing::subscriber::with_default(subscriber, || {
            tracing::info!(step = "unrelated", "other work");
            assert_eq!((bar.position(), bar.length()), (0, None));
            tracing::debug!(
                written_bytes = 10u64,
                total_bytes = 40u64,
                "point cache progress"
            );
            assert_eq!((bar.position(), bar.length()), (10, Some(40)));
            assert!(!bar.is_finished());
            tracing::debug!(
                written_bytes = 40u64,
                total_bytes = 40u64,
                "point cache progress"
            );
        });
        assert!(bar.is_finished());
    }
}
