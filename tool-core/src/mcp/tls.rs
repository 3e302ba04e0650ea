//! HTTPS for the Streamable HTTP server (feature `tls`): a certificate chain and its private
//! key, PEM files, served with rustls (TLS 1.2 and 1.3, ring's cryptography, HTTP/1.1 by ALPN).
//!
//! Owns [`TlsFiles`] and turning them into the acceptor `listen` wraps each connection in.
//! The files are read once, when the server starts (no reload: restart to rotate).

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// Where the server's certificate chain and private key are (PEM).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    /// The certificate chain, leaf first (PEM `CERTIFICATE` blocks).
    pub cert: PathBuf,
    /// The leaf's private key (PEM: PKCS#8, PKCS#1 or SEC1).
    pub key: PathBuf,
}

impl TlsFiles {
    /// The acceptor serving these files; an [`io::ErrorKind::InvalidInput`] error names the
    /// file that cannot be used and why.
    pub(super) fn acceptor(&self) -> io::Result<TlsAcceptor> {
        let invalid = |what: String| io::Error::new(io::ErrorKind::InvalidInput, what);
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&self.cert)
            .and_then(|certs| certs.collect::<Result<_, _>>())
            .map_err(|e| invalid(format!("the TLS certificate file {}: {e}", self.cert.display())))?;
        if certs.is_empty() {
            return Err(invalid(format!(
                "the TLS certificate file {} holds no PEM `CERTIFICATE` block",
                self.cert.display()
            )));
        }
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| invalid(format!("the TLS key file {}: {e}", self.key.display())))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| invalid(format!("TLS: {e}")))?
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .map_err(|e| {
                invalid(format!(
                    "the TLS certificate {} and key {} cannot be used together: {e}",
                    self.cert.display(),
                    self.key.display()
                ))
            })?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsAcceptor::from(Arc::new(config)))
    }
}
