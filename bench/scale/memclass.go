package main

import "runtime/metrics"

// memClasses is where this process's memory was, from runtime/metrics, in
// bytes: sampled with the RSS, kept for the sample of the largest RSS, so
// that a record says what the peak was made of.
type memClasses struct {
	HeapObjects  uint64 // live and not yet swept objects
	HeapUnused   uint64 // spans in use, the free slots in them (fragmentation)
	HeapFree     uint64 // free spans still mapped (not yet returned to the OS)
	Stacks       uint64 // goroutine stacks
	RuntimeOther uint64 // the runtime's own metadata, profiling buckets, and the rest
	LiveHeap     uint64 // heap marked live by the last completed GC
	HeapGoal     uint64 // the GC's heap goal
}

// memSampleNames are the runtime/metrics names read, in memClasses order.
var memSampleNames = [...]string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/other:bytes",
	"/gc/heap/live:bytes",
	"/gc/heap/goal:bytes",
}

// memReader reads memClasses, reusing its samples. Not safe for
// concurrent use (the sampler calls it under its lock).
type memReader struct{ samples []metrics.Sample }

func newMemReader() *memReader {
	r := &memReader{samples: make([]metrics.Sample, len(memSampleNames))}
	for i, n := range memSampleNames {
		r.samples[i].Name = n
	}
	return r
}

func (r *memReader) read() memClasses {
	metrics.Read(r.samples)
	v := func(i int) uint64 {
		if r.samples[i].Value.Kind() != metrics.KindUint64 {
			return 0
		}
		return r.samples[i].Value.Uint64()
	}
	return memClasses{HeapObjects: v(0), HeapUnused: v(1), HeapFree: v(2), Stacks: v(3),
		RuntimeOther: v(4), LiveHeap: v(5), HeapGoal: v(6)}
}
