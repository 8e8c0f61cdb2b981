//! Progress of local work that takes minutes at 32 GiB (`cuzk paramgen`, `cuzk pce extract`):
//! on a terminal a bar (or, where the work has no steps, a spinner) with the elapsed time; off
//! one the plain log lines each step writes anyway.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
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
