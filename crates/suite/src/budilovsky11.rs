//! Budilovsky, Toledo & Zuck (SYSTOR 2011) on the simulator. (to be written)
