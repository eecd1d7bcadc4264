//! Shared file mappings (`mmap(MAP_SHARED)`), for the mmap-fill scenario.
