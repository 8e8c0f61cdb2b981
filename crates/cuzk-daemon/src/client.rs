//! Connecting to a daemon over a unix socket or TCP (optionally TLS), with the bearer token.

use std::path::PathBuf;

use anyhow::{Context, Result};
use cuzk_proto::diag::v1::diagnostics_client::DiagnosticsClient;
use cuzk_proto::v1::proving_engine_client::ProvingEngineClient;
use hyper_util::rt::TokioIo;
use tonic::metadata::MetadataValue;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint, Uri};
use tonic::{Request, Status};

use crate::config::{Listen, DEFAULT_MAX_MESSAGE_BYTES};

/// Adds `authorization: Bearer <token>` when a token is set.
#[derive(Clone, Debug)]
pub struct Token(Option<MetadataValue<tonic::metadata::Ascii>>);

impl tonic::service::Interceptor for Token {
    fn call(&mut self, mut req: Request<()>) -> Result<Request<()>, Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

pub type Client = ProvingEngineClient<InterceptedService<Channel, Token>>;
pub type Diagnostics = DiagnosticsClient<InterceptedService<Channel, Token>>;

/// Where and how to connect.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// `unix:///path` or `host:port`.
    pub addr: String,
    pub token: Option<String>,
    /// CA certificate (PEM) for a TLS TCP listener.
    pub tls_ca: Option<PathBuf>,
    /// The name the daemon's certificate is issued for (default `localhost`).
    pub tls_domain: Option<String>,
}

impl Target {
    async fn channel(&self) -> Result<Channel> {
        let listen = Listen::parse(&self.addr).map_err(anyhow::Error::msg)?;
        match listen {
            Listen::Unix(path) => {
                // The URI is a placeholder: the connector always dials the socket.
                Endpoint::try_from("http://[::1]:1")?
                    .connect_with_connector(tower::service_fn(move |_: Uri| {
                        let path = path.clone();
                        async move {
                            Ok::<_, std::io::Error>(TokioIo::new(
                                tokio::net::UnixStream::connect(path).await?,
                            ))
                        }
                    }))
                    .await
                    .with_context(|| format!("connecting to {}", self.addr))
            }
            Listen::Tcp(addr) => {
                let mut ep = if let Some(ca) = &self.tls_ca {
                    let pem =
                        std::fs::read(ca).with_context(|| format!("reading {}", ca.display()))?;
                    Endpoint::try_from(format!("https://{addr}"))?.tls_config(
                        ClientTlsConfig::new()
                            .ca_certificate(Certificate::from_pem(pem))
                            .domain_name(self.tls_domain.as_deref().unwrap_or("localhost")),
                    )?
                } else {
                    Endpoint::try_from(format!("http://{addr}"))?
                };
                ep = ep.tcp_nodelay(true);
                ep.connect()
                    .await
                    .with_context(|| format!("connecting to {}", self.addr))
            }
        }
    }

    fn token(&self) -> Result<Token> {
        Ok(Token(match &self.token {
            None => None,
            Some(t) => Some(
                format!("Bearer {t}")
                    .parse()
                    .context("the token has characters a header cannot carry")?,
            ),
        }))
    }

    pub async fn connect(&self) -> Result<Client> {
        let channel = self.channel().await?;
        Ok(
            ProvingEngineClient::with_interceptor(channel, self.token()?)
                .max_decoding_message_size(DEFAULT_MAX_MESSAGE_BYTES as usize)
                .max_encoding_message_size(DEFAULT_MAX_MESSAGE_BYTES as usize),
        )
    }

    pub async fn diagnostics(&self) -> Result<Diagnostics> {
        let channel = self.channel().await?;
        Ok(DiagnosticsClient::with_interceptor(channel, self.token()?))
    }
}

/// Several daemons (one per GPU host) used as one, the way Curio's task scheduler spreads
/// proofs over machines: each job goes to the reachable daemon with the fewest jobs queued or
/// running (`GetStatus`), ties to the first. A daemon that does not answer takes no jobs until
/// it does again. Jobs are submitted (durably accepted) before the next is placed, so the next
/// choice sees them.
#[derive(Clone, Debug)]
pub struct Spread {
    targets: Vec<Target>,
}

impl Spread {
    pub fn new(targets: Vec<Target>) -> Self {
        Spread { targets }
    }

    /// Each daemon's queue depth (pending + in progress over every proof kind), `None` where
    /// it does not answer.
    pub async fn depths(&self) -> Vec<Option<u64>> {
        let mut out = Vec::with_capacity(self.targets.len());
        for t in &self.targets {
            let depth = async {
                let status = t
                    .connect()
                    .await?
                    .get_status(cuzk_proto::v1::GetStatusRequest {})
                    .await?
                    .into_inner();
                Ok::<_, anyhow::Error>(
                    status
                        .queues
                        .iter()
                        .map(|q| u64::from(q.pending) + u64::from(q.in_progress))
                        .sum(),
                )
            };
            out.push(depth.await.ok());
        }
        out
    }

    /// Submits `req` to the least-loaded reachable daemon: its index and the job id.
    pub async fn submit(&self, req: cuzk_proto::v1::SubmitProofRequest) -> Result<(usize, String)> {
        let (daemon, _) = self
            .depths()
            .await
            .into_iter()
            .enumerate()
            .filter_map(|(i, d)| Some((i, d?)))
            .min_by_key(|&(_, d)| d)
            .context("no daemon answers GetStatus")?;
        let job = self.targets[daemon]
            .connect()
            .await?
            .submit_proof(req)
            .await?
            .into_inner()
            .job_id;
        Ok((daemon, job))
    }

    /// Waits for job `job_id` on daemon `daemon` (as [`Spread::submit`] returned them).
    pub async fn await_job(
        &self,
        daemon: usize,
        job_id: &str,
    ) -> Result<cuzk_proto::v1::AwaitProofResponse> {
        Ok(self.targets[daemon]
            .connect()
            .await?
            .await_proof(cuzk_proto::v1::AwaitProofRequest {
                job_id: job_id.into(),
                timeout_ms: 0,
            })
            .await?
            .into_inner())
    }
}
