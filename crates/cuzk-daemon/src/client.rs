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
