//! Which sealed confirmation states were already spent.
//!
//! A 2026-07-28 `requestState` may be redeemed once. One process remembers
//! the nonces it accepted ([`ReplayStore::Local`]); replicas behind a load
//! balancer share the set in Redis ([`ReplayStore::Redis`]): spending is one
//! atomic `SET key 1 NX PX ttl`, whose TTL is the state's remaining
//! lifetime, so the set never outgrows the states still valid.
//!
//! If the shared store cannot be reached, nothing is spent and the caller is
//! told to retry ([`ReplayError::Unavailable`]): a confirmed mutation is never
//! applied without the single-use check.
//!
//! The URL may carry a password (`redis://:${TOOLHOST_REDIS_PASSWORD}@redis:6379/0`,
//! read from the environment by [`crate::config`]). It is never shown: the
//! operator's log names the store by host and port, and a refused password
//! or an unreachable server is reported there as what to fix, never with the
//! URL. Clients are told only that the replay store cannot be reached
//! ([`ReplayError::for_client`]): not where it is, nor why.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tracing::Instrument;

use crate::config::ReplayUrl;

/// How long one Redis operation (or connecting) may take before the store
/// counts as unreachable.
const REDIS_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a state could not be spent.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The state was spent before.
    #[error("already spent")]
    Spent,
    /// The shared store did not answer; nothing was spent. Its `Display`
    /// names the store and what to fix, for the operator's log; clients are
    /// told [`ReplayError::for_client`].
    #[error("the replay store ({store}) cannot be reached: {reason}")]
    Unavailable {
        /// The store, for the message (never its password).
        store: String,
        /// What went wrong.
        reason: String,
    },
}

impl ReplayError {
    /// What a client is told: that the store of spent states did not
    /// answer, never where it is or why (the operator's log says both).
    pub fn for_client(&self) -> &'static str {
        match self {
            ReplayError::Spent => "already spent",
            ReplayError::Unavailable { .. } => {
                "the replay store (where used confirmation answers are remembered) cannot be \
                 reached right now"
            }
        }
    }
}

/// Where spent nonces are kept.
pub enum ReplayStore {
    /// In this process.
    Local(Mutex<HashMap<String, Instant>>),
    /// In Redis, shared by every replica (and with the `limit` rules'
    /// counters, which use the same connection).
    Redis(std::sync::Arc<RedisReplay>),
}

/// The Redis-backed store: connected on first use, reconnected after a
/// failure.
pub struct RedisReplay {
    client: redis::Client,
    /// The URL without credentials, for messages.
    shown: String,
    /// The server's host (or socket path) and port, for the spans of its
    /// commands.
    address: (String, Option<u16>),
    connection: tokio::sync::Mutex<Option<ConnectionManager>>,
}

impl ReplayStore {
    /// A store in this process.
    pub fn local() -> ReplayStore {
        ReplayStore::Local(Mutex::new(HashMap::new()))
    }

    /// A store in the Redis server at `url` (`redis://[:PASSWORD@]host:port/db`).
    /// The server need not be up yet. Warns when the config file itself
    /// holds the password.
    pub fn redis(url: &ReplayUrl) -> Result<ReplayStore, redis::RedisError> {
        Ok(ReplayStore::Redis(std::sync::Arc::new(RedisReplay::open(
            url,
        )?)))
    }

    /// The shared Redis store, if this is one.
    pub fn shared(&self) -> Option<std::sync::Arc<RedisReplay>> {
        match self {
            ReplayStore::Local(_) => None,
            ReplayStore::Redis(redis) => Some(redis.clone()),
        }
    }

    /// Spends `nonce`, remembered for `ttl`: `Ok` the first time only.
    pub async fn spend(&self, nonce: &str, ttl: Duration) -> Result<(), ReplayError> {
        match self {
            ReplayStore::Local(used) => {
                let mut used = used.lock().expect("not poisoned");
                let now = Instant::now();
                used.retain(|_, until| *until > now);
                if used.insert(nonce.to_string(), now + ttl).is_some() {
                    return Err(ReplayError::Spent);
                }
                Ok(())
            }
            ReplayStore::Redis(redis) => redis.spend(nonce, ttl).await,
        }
    }
}

impl RedisReplay {
    /// The store at `url` (connected on first use). Warns when the file
    /// itself holds the password.
    pub fn open(url: &ReplayUrl) -> Result<RedisReplay, redis::RedisError> {
        // `rediss://` goes over rustls with the provider the host's other
        // TLS clients use; set once per process, so a second call is a no-op.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = redis::Client::open(url.url.as_str())?;
        let info = client.get_connection_info();
        let shown = format!("redis at {}", info.addr());
        let address = match info.addr() {
            redis::ConnectionAddr::Tcp(host, port)
            | redis::ConnectionAddr::TcpTls { host, port, .. } => (host.clone(), Some(*port)),
            other => (other.to_string(), None),
        };
        if url.literal_password {
            tracing::warn!(
                "`state.replay` holds a password written in the config file; keep it in the \
                 environment instead: replay = \"redis://:${{TOOLHOST_REDIS_PASSWORD}}@HOST:6379/0\""
            );
        }
        Ok(RedisReplay {
            client,
            shown,
            address,
            connection: tokio::sync::Mutex::new(None),
        })
    }

    /// Runs `pipeline` on the shared store, as [`RedisReplay::run`] does
    /// a command (an atomic pipeline is one `MULTI`/`EXEC`).
    pub async fn run_pipeline<T: redis::FromRedisValue + Send>(
        &self,
        pipeline: &redis::Pipeline,
    ) -> Result<T, ReplayError> {
        self.run(pipeline).await
    }

    async fn spend(&self, nonce: &str, ttl: Duration) -> Result<(), ReplayError> {
        let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1);
        let mut command = redis::cmd("SET");
        command
            .arg(format!("toolhost:spent:{nonce}"))
            .arg(1)
            .arg("NX")
            .arg("PX")
            .arg(ttl_ms);
        // Trying again after a lost connection (see [`RedisReplay::run`])
        // cannot spend a state twice: if the first SET did reach Redis, the
        // second finds the key and the state counts as spent.
        match self.run::<Option<String>>(&command).await? {
            Some(_) => Ok(()),
            None => Err(ReplayError::Spent),
        }
    }

    /// Runs `command` on the shared store: the one way toolhost talks to
    /// Redis (spent states here, `limit` rules' counters in
    /// [`crate::rules::limits`]). Unreachable, it is
    /// [`ReplayError::Unavailable`], saying what to fix.
    pub async fn run<T: redis::FromRedisValue + Send>(
        &self,
        command: &impl Query,
    ) -> Result<T, ReplayError> {
        let unavailable = |reason: String| ReplayError::Unavailable {
            store: self.shown.clone(),
            reason,
        };
        // A pooled connection may have died with a Redis that restarted
        // since: its first use fails although Redis is up. Connect afresh
        // and try once more before answering TRANSIENT.
        let mut retried = false;
        let span = redis_span(command, &self.address);
        loop {
            let mut connection = self
                .connection(&unavailable)
                .instrument(span.clone())
                .await?;
            let query = command.send::<T>(&mut connection).instrument(span.clone());
            match tokio::time::timeout(REDIS_TIMEOUT, query).await {
                Ok(Ok(value)) => return Ok(value),
                Ok(Err(e)) => {
                    // Connect afresh next time.
                    *self.connection.lock().await = None;
                    let connection_lost =
                        e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal();
                    if connection_lost && !retried {
                        tracing::debug!(
                            "the replay store's connection was lost ({e}); reconnecting"
                        );
                        retried = true;
                        continue;
                    }
                    return Err(unavailable(what_to_fix(&e)));
                }
                Err(_) => {
                    *self.connection.lock().await = None;
                    return Err(unavailable(format!("no answer within {REDIS_TIMEOUT:?}")));
                }
            }
        }
    }

    /// The pooled connection, or a new one (one attempt: a failure is
    /// answered now, retryably, and the next spend connects afresh).
    async fn connection(
        &self,
        unavailable: &impl Fn(String) -> ReplayError,
    ) -> Result<ConnectionManager, ReplayError> {
        let mut slot = self.connection.lock().await;
        if let Some(connection) = slot.as_ref() {
            return Ok(connection.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_number_of_retries(0)
            .set_connection_timeout(Some(REDIS_TIMEOUT));
        let connect = ConnectionManager::new_with_config(self.client.clone(), config);
        let connection = tokio::time::timeout(REDIS_TIMEOUT, connect)
            .await
            .map_err(|_| unavailable(format!("no connection within {REDIS_TIMEOUT:?}")))?
            .map_err(|e| unavailable(what_to_fix(&e)))?;
        *slot = Some(connection.clone());
        Ok(connection)
    }
}

/// What [`RedisReplay::run`] sends: one command, or a pipeline of them.
pub trait Query: Sync {
    /// Its operation's name, for its span: the command (`SET`, `EVAL`),
    /// or `PIPELINE`.
    fn operation(&self) -> String;

    /// Sends it on `connection` and reads the answer.
    fn send<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        connection: &'a mut ConnectionManager,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = redis::RedisResult<T>> + Send + 'a>>;
}

impl Query for redis::Cmd {
    fn operation(&self) -> String {
        self.args_iter()
            .next()
            .and_then(|arg| match arg {
                redis::Arg::Simple(bytes) => std::str::from_utf8(bytes).ok(),
                _ => None,
            })
            .unwrap_or("redis")
            .to_ascii_uppercase()
    }

    fn send<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        connection: &'a mut ConnectionManager,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = redis::RedisResult<T>> + Send + 'a>>
    {
        Box::pin(self.query_async(connection))
    }
}

impl Query for redis::Pipeline {
    fn operation(&self) -> String {
        "PIPELINE".to_string()
    }

    fn send<'a, T: redis::FromRedisValue + Send + 'a>(
        &'a self,
        connection: &'a mut ConnectionManager,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = redis::RedisResult<T>> + Send + 'a>>
    {
        Box::pin(self.query_async(connection))
    }
}

/// Counts one request in Redis: the count after it, the counter set to
/// expire when its window ends on the first, in one atomic script (two
/// replicas counting at once never both see the last free place).
const COUNT_SCRIPT: &str = r"
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n
";

impl crate::rules::limits::SharedCounters for RedisReplay {
    fn count<'a>(
        &'a self,
        key: &'a str,
        expires_ms: u64,
    ) -> toolhost_runtime::hooks::BoxFuture<'a, Result<u64, String>> {
        Box::pin(async move {
            let mut command = redis::cmd("EVAL");
            // PEXPIRE wants at least 1.
            command
                .arg(COUNT_SCRIPT)
                .arg(1)
                .arg(key)
                .arg(expires_ms.max(1));
            self.run(&command).await.map_err(|e| e.to_string())
        })
    }
}

/// What a Redis error means for the operator. Redis's own text names no
/// credential; the URL, which may, is never part of it.
fn what_to_fix(error: &redis::RedisError) -> String {
    let refused_credentials = error.kind() == redis::ErrorKind::AuthenticationFailed
        || matches!(error.code(), Some("NOAUTH" | "WRONGPASS"));
    if refused_credentials {
        format!(
            "Redis refused the credentials ({error}); set the password it expects in \
             `state.replay`, e.g. redis://:${{TOOLHOST_REDIS_PASSWORD}}@HOST:6379/0 with the \
             variable exported"
        )
    } else if error.is_connection_refusal() || error.is_io_error() || error.is_timeout() {
        format!("{error}; check that Redis is running and `state.replay` names its host and port")
    } else {
        error.to_string()
    }
}

/// The span of one Redis command (database client conventions): the
/// command's name and the server's host and port, never its arguments (a
/// state's nonce, a limit's key), its URL or its password.
fn redis_span(command: &impl Query, (host, port): &(String, Option<u16>)) -> tracing::Span {
    let name = command.operation();
    tracing::info_span!(
        target: "toolhost::replay",
        "redis",
        otel.name = %name,
        otel.kind = "client",
        db.system.name = "redis",
        db.operation.name = %name,
        server.address = %host,
        server.port = *port,
    )
}
