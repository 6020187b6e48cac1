package profiles

import (
	"context"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/bench"
	"github.com/etcdperf/etcdperf/results"
)

// part is one workload of a composite and its share of the paced requests.
type part struct {
	w     bench.Workload
	share float64
	// kinds maps the part's op kinds to the composite's.
	kinds []int
}

// composite runs several bench workloads as one: each request goes to a part
// drawn by share, and op kinds of the same name (the puts of every value size)
// are reported as one op. It is the adapter that lets a profile mix what bench's
// workloads do separately (several value sizes, leases next to puts and ranges).
type composite struct {
	parts []*part
	ops   []bench.OpKind
	// cum is the cumulative share of each part, for the draw.
	cum []float64
}

// compose merges parts; shares sum to 1.
func compose(parts []*part) *composite {
	c := &composite{parts: parts}
	index := map[string]int{}
	var acc float64
	for _, p := range parts {
		for _, k := range p.w.Ops() {
			i, ok := index[k.Name]
			if !ok {
				i = len(c.ops)
				index[k.Name] = i
				c.ops = append(c.ops, bench.OpKind{Name: k.Name})
			}
			c.ops[i].Share += p.share * k.Share
			p.kinds = append(p.kinds, i)
		}
		acc += p.share
		c.cum = append(c.cum, acc)
	}
	return c
}

// SetDirect gives every part that takes them the direct load connections.
func (c *composite) SetDirect(conns []grpc.ClientConnInterface) {
	for _, p := range c.parts {
		if d, ok := p.w.(bench.Directed); ok {
			d.SetDirect(conns)
		}
	}
}

// Ops reports the merged op kinds.
func (c *composite) Ops() []bench.OpKind { return c.ops }

// Worker draws a part for each request and maps its outcome's kind.
func (c *composite) Worker(id int) bench.Op {
	ops := make([]bench.Op, len(c.parts))
	for i, p := range c.parts {
		ops[i] = p.w.Worker(id)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(id)+1<<32))
	return func(ctx context.Context, seq uint64) bench.Outcome {
		x := rng.Float64() * c.cum[len(c.cum)-1]
		i := 0
		for i < len(c.cum)-1 && x >= c.cum[i] {
			i++
		}
		out := ops[i](ctx, seq)
		out.Kind = c.parts[i].kinds[out.Kind]
		return out
	}
}

// Prepare prepares every part in turn, each emitting under its mapped kinds.
func (c *composite) Prepare(ctx context.Context, emit bench.Emit) error {
	for _, p := range c.parts {
		pp, ok := p.w.(bench.Preparer)
		if !ok {
			continue
		}
		kinds := p.kinds
		if err := pp.Prepare(ctx, func(kind int, sent, arrived time.Time, err error) {
			emit(kinds[kind], sent, arrived, err)
		}); err != nil {
			return err
		}
	}
	return nil
}

// Finish finishes every part that prepared (bench calls Finish whenever Prepare
// ran, also after a failed Prepare, so every part is finished).
func (c *composite) Finish(ctx context.Context) {
	for _, p := range c.parts {
		if f, ok := p.w.(bench.Finisher); ok {
			f.Finish(ctx)
		}
	}
}

// Annotate lets each part annotate its own ops, then adds the watch counts into
// the merged op. Only watch fields are annotated by bench's workloads.
func (c *composite) Annotate(ops []results.Op) {
	for _, p := range c.parts {
		f, ok := p.w.(bench.Finisher)
		if !ok {
			continue
		}
		local := make([]results.Op, len(p.kinds))
		f.Annotate(local)
		for i, l := range local {
			o := &ops[p.kinds[i]]
			o.Events += l.Events
			o.Watchers += l.Watchers
			o.MissedEvents += l.MissedEvents
			o.OutOfOrder += l.OutOfOrder
			if l.CreateMs != nil && (o.CreateMs == nil || l.CreateMs.P99 > o.CreateMs.P99) {
				o.CreateMs = l.CreateMs
			}
		}
	}
}
