//! Capability probes: reflink, snapshot, resize, corruption detection, fsck time.
