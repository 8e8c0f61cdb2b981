//! The `cuzk` daemon as a library: configuration, the `cuzk.v1` service over
//! [`cuzk_engine::Engine`], the server (unix socket / TCP with token or TLS, Prometheus,
//! graceful drain), a client, and the benchmark runner with its timeline picture.

pub mod authority;
pub mod bench;
pub mod client;
pub mod config;
pub mod logging;
pub mod server;
pub mod service;
pub mod timeline;
