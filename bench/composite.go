package bench

import (
	"context"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"

	"github.com/etcdperf/etcdperf/results"
)

// Part is one workload of a Composite and its share of the paced requests.
type Part struct {
	W     Workload
	Share float64
	// kinds maps the Part's op kinds to the Composite's.
	kinds []int
}

// Composite runs several bench workloads as one: each request goes to a Part
// drawn by share, and op kinds of the same name (the puts of every value size)
// are reported as one op. It is the adapter that lets a profile mix what bench's
// workloads do separately (several value sizes, leases next to puts and ranges).
type Composite struct {
	parts []*Part
	ops   []OpKind
	// cum is the cumulative share of each Part, for the draw.
	cum []float64
}

// compose merges parts; shares sum to 1.
func Compose(parts []*Part) *Composite {
	c := &Composite{parts: parts}
	index := map[string]int{}
	var acc float64
	for _, p := range parts {
		for _, k := range p.W.Ops() {
			i, ok := index[k.Name]
			if !ok {
				i = len(c.ops)
				index[k.Name] = i
				c.ops = append(c.ops, OpKind{Name: k.Name})
			}
			c.ops[i].Share += p.Share * k.Share
			p.kinds = append(p.kinds, i)
		}
		acc += p.Share
		c.cum = append(c.cum, acc)
	}
	return c
}

// SetDirect gives every Part that takes them the direct load connections.
func (c *Composite) SetDirect(conns []grpc.ClientConnInterface) {
	for _, p := range c.parts {
		if d, ok := p.W.(Directed); ok {
			d.SetDirect(conns)
		}
	}
}

// Ops reports the merged op kinds.
func (c *Composite) Ops() []OpKind { return c.ops }

// Worker draws a Part for each request and maps its outcome's kind.
func (c *Composite) Worker(id int) Op {
	ops := make([]Op, len(c.parts))
	for i, p := range c.parts {
		ops[i] = p.W.Worker(id)
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(id)+1<<32))
	return func(ctx context.Context, seq uint64) Outcome {
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

// Prepare prepares every Part in turn, each emitting under its mapped kinds.
func (c *Composite) Prepare(ctx context.Context, emit Emit) error {
	for _, p := range c.parts {
		pp, ok := p.W.(Preparer)
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

// Finish finishes every Part that prepared (bench calls Finish whenever Prepare
// ran, also after a failed Prepare, so every Part is finished).
func (c *Composite) Finish(ctx context.Context) {
	for _, p := range c.parts {
		if f, ok := p.W.(Finisher); ok {
			f.Finish(ctx)
		}
	}
}

// Annotate lets each Part annotate its own ops, then adds the watch counts into
// the merged op. Only watch fields are annotated by bench's workloads.
func (c *Composite) Annotate(ops []results.Op) {
	for _, p := range c.parts {
		f, ok := p.W.(Finisher)
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
			o.UndeliveredEvents += l.UndeliveredEvents
			o.OutOfOrder += l.OutOfOrder
			if l.CreateMs != nil && (o.CreateMs == nil || l.CreateMs.P99 > o.CreateMs.P99) {
				o.CreateMs = l.CreateMs
			}
		}
	}
}
