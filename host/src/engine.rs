//! The shared wasmtime [`Engine`]: component model, async, pooling instance
//! allocation, and epoch interruption driven by a ticker thread.
//!
//! One engine serves every plugin. Its configuration is part of the key of
//! compiled code, so it is built in one place.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use tokio::sync::Semaphore;
use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances. A call's deadline is checked at this
/// granularity, and a guest that never calls the host yields to other tasks
/// this often.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Component instances that can exist at once (the pool's size). Calls past
/// this wait for a slot rather than fail.
pub const MAX_INSTANCES: u32 = 128;

/// Bytes of each pooled linear memory kept resident after a call (see
/// `PoolingAllocationConfig::linear_memory_keep_resident`).
pub const KEEP_RESIDENT_BYTES: usize = 2 << 20;

/// Bytes of each pooled table kept resident after a call.
pub const TABLE_KEEP_RESIDENT_BYTES: usize = 64 << 10;

/// The engine and the pool slots that gate instantiation.
#[derive(Clone)]
pub struct Runtime {
    /// The wasmtime engine.
    pub engine: Engine,
    /// One permit per pool slot; held for the life of a call's store.
    pub slots: Arc<Semaphore>,
    /// Calls waiting for a human's answer, capped below the pool size.
    pub waiting: Arc<crate::call::WaitingForUser>,
    /// Each plugin block's `limits.concurrent_calls` turns.
    pub turns: Arc<crate::call::BlockTurns>,
}

impl Runtime {
    /// Builds the engine, with instance memory up to `max_memory_bytes`,
    /// and starts the epoch ticker.
    pub fn new(max_memory_bytes: u64) -> Result<Runtime> {
        let mut config = Config::new();
        config.wasm_component_model(true);
        config.epoch_interruption(true);
        config.parallel_compilation(true);

        let mut pool = PoolingAllocationConfig::default();
        pool.total_component_instances(MAX_INSTANCES)
            .total_core_instances(MAX_INSTANCES * 4)
            .total_memories(MAX_INSTANCES)
            .total_tables(MAX_INSTANCES * 2)
            .total_stacks(MAX_INSTANCES)
            .max_memories_per_component(2)
            .max_memory_size(max_memory_bytes as usize)
            // A slot's first pages stay mapped between calls and are reset
            // by copying instead of `madvise`: no TLB shootdown and no page
            // faults on the next call. With `PAGEMAP_SCAN` (Linux 6.7+, used
            // when the kernel has it) only the pages the call dirtied are
            // reset. The size covers a typical Rust guest's stack, data and
            // small heap.
            .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
            .table_keep_resident(TABLE_KEEP_RESIDENT_BYTES)
            .pagemap_scan(Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));

        let engine = Engine::new(&config)
            .map_err(anyhow::Error::from)
            .context("cannot configure the WebAssembly engine")?;
        let ticker = engine.weak();
        std::thread::Builder::new()
            .name("toolhost-epoch".into())
            .spawn(move || {
                while let Some(engine) = ticker.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .context("cannot start the epoch thread")?;
        Ok(Runtime {
            engine,
            slots: Arc::new(Semaphore::new(MAX_INSTANCES as usize)),
            waiting: Arc::default(),
            turns: Arc::default(),
        })
    }
}
