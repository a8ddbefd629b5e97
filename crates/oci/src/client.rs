//! Talking to a registry: `oci-client` with toolhost's credentials, bounds
//! and digest checks.
//!
//! - **Transport**: https, except to a loopback registry (`localhost`,
//!   `127.0.0.0/8`, `[::1]`), which is plain http as Docker treats it.
//! - **Credentials**, first found wins: the environment
//!   (`TOOLHOST_REGISTRY_USERNAME` and `TOOLHOST_REGISTRY_PASSWORD`, for
//!   CI), then Docker's `config.json` (`$DOCKER_CONFIG` or `~/.docker`:
//!   `auths`, `credHelpers`, `credsStore`), else anonymous.
//! - **Bounds**: a manifest larger than `oci.max_manifest_bytes` is refused;
//!   a layer whose descriptor, or whose download, exceeds
//!   `oci.max_blob_bytes` is refused, and the download stops there.
//! - **Digests**: a manifest fetched by digest must hash to it, one fetched
//!   by tag to the digest the registry names; a blob must hash to its
//!   descriptor's digest. A mismatch is an error, and nothing is kept.

use futures_util::StreamExt;
use oci_client::client::{ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::manifest::{OCI_IMAGE_MEDIA_TYPE, OciDescriptor};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference, RegistryOperation};

use super::OciError;
use super::store::sha256_digest;

/// Environment variable: the registry user name (with
/// [`PASSWORD_ENV`]), for every registry.
pub const USERNAME_ENV: &str = "TOOLHOST_REGISTRY_USERNAME";
/// Environment variable: the registry password or token.
pub const PASSWORD_ENV: &str = "TOOLHOST_REGISTRY_PASSWORD";

/// The manifest media types toolhost asks for.
const ACCEPTED_MANIFESTS: &[&str] = &[
    OCI_IMAGE_MEDIA_TYPE,
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
];

/// Size bounds of what is fetched.
#[derive(Debug, Clone, Copy)]
pub struct FetchLimits {
    /// Largest manifest, in bytes (`oci.max_manifest_bytes`).
    pub max_manifest_bytes: u64,
    /// Largest blob, in bytes (`oci.max_blob_bytes`).
    pub max_blob_bytes: u64,
}

/// A connection to one registry.
pub struct RegistryClient {
    client: Client,
    auth: RegistryAuth,
    registry: String,
    limits: FetchLimits,
}

/// Whether `registry` (`host[:port]`) is on this machine.
fn is_loopback(registry: &str) -> bool {
    let host = match registry.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(rest),
        None => registry.rsplit_once(':').map_or(registry, |(h, _)| h),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The credentials for `registry`: environment, then Docker's config.
fn credentials(registry: &str) -> RegistryAuth {
    if let (Ok(user), Ok(password)) = (std::env::var(USERNAME_ENV), std::env::var(PASSWORD_ENV)) {
        return RegistryAuth::Basic(user, password);
    }
    match docker_credential::get_credential(registry) {
        Ok(docker_credential::DockerCredential::UsernamePassword(user, password)) => {
            RegistryAuth::Basic(user, password)
        }
        Ok(docker_credential::DockerCredential::IdentityToken(token)) => {
            RegistryAuth::Bearer(token)
        }
        Err(e) => {
            tracing::debug!("no Docker credentials for {registry}: {e}");
            RegistryAuth::Anonymous
        }
    }
}

/// Whether `e` says the thing asked for does not exist.
fn is_not_found(e: &OciDistributionError) -> bool {
    match e {
        OciDistributionError::RegistryError { envelope, .. } => envelope.errors.iter().any(|e| {
            matches!(
                e.code,
                OciErrorCode::ManifestUnknown | OciErrorCode::NotFound | OciErrorCode::BlobUnknown
            )
        }),
        OciDistributionError::ServerError { code, .. } => *code == 404,
        OciDistributionError::ImageManifestNotFoundError(_) => true,
        _ => false,
    }
}

impl RegistryClient {
    /// A client for the registry of `reference`.
    pub fn for_reference(reference: &Reference, limits: FetchLimits) -> RegistryClient {
        // The HTTP stack uses rustls with ring, as the host's other client.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let registry = reference.resolve_registry().to_string();
        let protocol = if is_loopback(&registry) {
            ClientProtocol::Http
        } else {
            ClientProtocol::Https
        };
        let client = Client::new(ClientConfig {
            protocol,
            connect_timeout: Some(std::time::Duration::from_secs(10)),
            read_timeout: Some(std::time::Duration::from_secs(60)),
            ..ClientConfig::default()
        });
        RegistryClient {
            client,
            auth: credentials(&registry),
            registry,
            limits,
        }
    }

    fn error(&self, reference: &Reference, e: OciDistributionError) -> OciError {
        match e {
            OciDistributionError::DigestError(
                oci_client::errors::DigestError::VerificationError { expected, actual },
            ) => OciError::DigestMismatch {
                what: format!("manifest of {reference}"),
                expected,
                actual,
            },
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_)
            | OciDistributionError::ServerError {
                code: 401 | 403, ..
            } => OciError::Unauthorized {
                registry: self.registry.clone(),
            },
            OciDistributionError::RegistryError { ref envelope, .. }
                if envelope.errors.iter().any(|e| {
                    matches!(e.code, OciErrorCode::Unauthorized | OciErrorCode::Denied)
                }) =>
            {
                OciError::Unauthorized {
                    registry: self.registry.clone(),
                }
            }
            e => OciError::Registry {
                reference: reference.to_string(),
                reason: e.to_string(),
            },
        }
    }

    /// The digest `reference` (a tag) names now.
    pub async fn resolve(&self, reference: &Reference) -> Result<String, OciError> {
        self.client
            .fetch_manifest_digest(reference, &self.auth)
            .await
            .map_err(|e| self.error(reference, e))
    }

    /// The manifest `reference` names, and its digest, checked against the
    /// reference's digest (or the registry's, for a tag); `None` if the
    /// registry has no such manifest.
    pub async fn manifest(
        &self,
        reference: &Reference,
    ) -> Result<Option<(Vec<u8>, String)>, OciError> {
        let (bytes, digest) = match self
            .client
            .pull_manifest_raw(reference, &self.auth, ACCEPTED_MANIFESTS)
            .await
        {
            Ok(found) => found,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(self.error(reference, e)),
        };
        if bytes.len() as u64 > self.limits.max_manifest_bytes {
            return Err(OciError::ManifestTooLarge {
                reference: reference.to_string(),
                size: bytes.len() as u64,
                max: self.limits.max_manifest_bytes,
            });
        }
        let actual = sha256_digest(&bytes);
        let expected = reference.digest().unwrap_or(&digest);
        if actual != expected {
            return Err(OciError::DigestMismatch {
                what: format!("manifest of {reference}"),
                expected: expected.to_string(),
                actual,
            });
        }
        Ok(Some((bytes.to_vec(), actual)))
    }

    /// The blob `descriptor` names, read at most to `oci.max_blob_bytes`
    /// and checked against its digest.
    pub async fn blob(
        &self,
        reference: &Reference,
        descriptor: &OciDescriptor,
    ) -> Result<Vec<u8>, OciError> {
        let max = self.limits.max_blob_bytes;
        let too_large = |size| OciError::BlobTooLarge {
            reference: reference.to_string(),
            size,
            max,
        };
        if descriptor.size < 0 || descriptor.size as u64 > max {
            return Err(too_large(descriptor.size.max(0) as u64));
        }
        let mut stream = self
            .client
            .pull_blob_stream(reference, descriptor)
            .await
            .map_err(|e| self.error(reference, e))?;
        if let Some(length) = stream.content_length
            && length > max
        {
            return Err(too_large(length));
        }
        let mut bytes = Vec::with_capacity(descriptor.size as usize);
        while let Some(chunk) = stream.stream.next().await {
            let chunk =
                chunk.map_err(|e| match e.downcast::<oci_client::errors::DigestError>() {
                    Ok(oci_client::errors::DigestError::VerificationError { expected, actual }) => {
                        OciError::DigestMismatch {
                            what: format!("layer of {reference}"),
                            expected,
                            actual,
                        }
                    }
                    Ok(e) => OciError::Registry {
                        reference: reference.to_string(),
                        reason: format!("reading {}: {e}", descriptor.digest),
                    },
                    Err(e) => OciError::Registry {
                        reference: reference.to_string(),
                        reason: format!("reading {}: {e}", descriptor.digest),
                    },
                })?;
            if (bytes.len() + chunk.len()) as u64 > max {
                return Err(too_large((bytes.len() + chunk.len()) as u64));
            }
            bytes.extend_from_slice(&chunk);
        }
        let actual = sha256_digest(&bytes);
        if actual != descriptor.digest {
            return Err(OciError::DigestMismatch {
                what: format!("layer of {reference}"),
                expected: descriptor.digest.clone(),
                actual,
            });
        }
        Ok(bytes)
    }

    /// Authenticates for pushing to `reference`'s repository.
    pub async fn authenticate_push(&self, reference: &Reference) -> Result<(), OciError> {
        self.client
            .auth(reference, &self.auth, RegistryOperation::Push)
            .await
            .map(|_| ())
            .map_err(|e| self.error(reference, e))
    }

    /// Uploads `bytes` as the blob `digest`, unless the registry has it.
    pub async fn push_blob(
        &self,
        reference: &Reference,
        bytes: &[u8],
        digest: &str,
    ) -> Result<(), OciError> {
        let exists = self
            .client
            .blob_exists(reference, digest)
            .await
            .unwrap_or(false);
        if !exists {
            self.client
                .push_blob(reference, bytes.to_vec(), digest)
                .await
                .map_err(|e| self.error(reference, e))?;
        }
        Ok(())
    }

    /// Uploads `manifest` (an OCI image manifest) under `reference`.
    pub async fn push_manifest(
        &self,
        reference: &Reference,
        manifest: &[u8],
    ) -> Result<(), OciError> {
        self.client
            .push_manifest_raw(
                reference,
                manifest.to_vec(),
                OCI_IMAGE_MEDIA_TYPE.parse().expect("a valid header value"),
            )
            .await
            .map(|_| ())
            .map_err(|e| self.error(reference, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_registries_are_recognised() {
        for r in [
            "localhost:5000",
            "127.0.0.1:5000",
            "127.1.2.3",
            "[::1]:5000",
        ] {
            assert!(is_loopback(r), "{r}");
        }
        for r in ["ghcr.io", "10.0.0.1:5000", "registry.local:5000"] {
            assert!(!is_loopback(r), "{r}");
        }
    }
}
