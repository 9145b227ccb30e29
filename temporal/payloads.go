package temporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/agentloop/agentloop/session"
)

// DefaultSpillThreshold is the payload size past which
// SpillingDataConverter keeps a payload in the session store: well below
// Temporal's 2 MB limit per payload (and its 512 KB warning).
const DefaultSpillThreshold = 256 << 10

// spilledEncoding marks a payload whose data is the SHA-256 of a payload
// kept in the store.
const spilledEncoding = "agentloop/spilled"

// spillProject is the session-store project under which spilled payloads
// are kept, one transcript per payload named by its SHA-256.
const spillProject = "agentloop-temporal-payloads"

// SpillingDataConverter is Temporal's default data converter, except that
// a payload larger than threshold bytes (0: DefaultSpillThreshold) is kept
// in store and travels as a reference to it: a long conversation (a model
// request, a continue-as-new input, a session's lines) or a large tool
// result never reaches Temporal's payload limits. Every client and worker
// of the sessions' namespace must use it with the same store (a shared
// PostgreSQL or Redis store when they run on several machines), in
// client.Options.DataConverter. A nil store makes every payload that
// needs spilling (or was spilled) an error naming it.
//
// Payloads are kept by content (the same payload is stored once) and are
// not deleted when the session ends; the store's operator prunes the
// project "agentloop-temporal-payloads" by age.
func SpillingDataConverter(store session.Store, threshold int) converter.DataConverter {
	if threshold <= 0 {
		threshold = DefaultSpillThreshold
	}
	return converter.NewCodecDataConverter(converter.GetDefaultDataConverter(), &spillCodec{store: store, threshold: threshold})
}

// spillCodec is SpillingDataConverter's codec.
type spillCodec struct {
	store     session.Store
	threshold int
}

// storeTimeout bounds a store call of the codec (it gets no context).
const storeTimeout = 30 * time.Second

func (c *spillCodec) Encode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if proto.Size(p) <= c.threshold {
			out[i] = p
			continue
		}
		if c.store == nil {
			return nil, fmt.Errorf("agentloop/temporal: a payload of %d bytes needs spilling, and SpillingDataConverter has no store", proto.Size(p))
		}
		data, err := proto.Marshal(p)
		if err != nil {
			return nil, fmt.Errorf("agentloop/temporal: spilling a payload: %w", err)
		}
		sum := sha256.Sum256(data)
		name := hex.EncodeToString(sum[:])
		raw, err := json.Marshal(data)
		if err != nil {
			return nil, fmt.Errorf("agentloop/temporal: spilling a payload: %w", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		err = c.store.Append(ctx, session.Key{ProjectKey: spillProject, SessionID: name}, []session.Entry{{
			Type: "payload", UUID: name, SessionID: name, Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
			Extra: map[string]json.RawMessage{"payload": raw}}})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("agentloop/temporal: spilling a payload of %d bytes to the session store: %w", len(data), err)
		}
		out[i] = &commonpb.Payload{Metadata: map[string][]byte{converter.MetadataEncoding: []byte(spilledEncoding)}, Data: []byte(name)}
	}
	return out, nil
}

func (c *spillCodec) Decode(ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
	out := make([]*commonpb.Payload, len(ps))
	for i, p := range ps {
		if string(p.GetMetadata()[converter.MetadataEncoding]) != spilledEncoding {
			out[i] = p
			continue
		}
		name := string(p.GetData())
		if c.store == nil {
			return nil, fmt.Errorf("agentloop/temporal: payload %s was spilled, and SpillingDataConverter has no store to read it from", name)
		}
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		entries, err := c.store.Load(ctx, session.Key{ProjectKey: spillProject, SessionID: name})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("agentloop/temporal: reading spilled payload %s: %w", name, err)
		}
		if len(entries) == 0 {
			return nil, fmt.Errorf("agentloop/temporal: spilled payload %s is not in the session store (pruned, or another store)", name)
		}
		var data []byte
		if err := json.Unmarshal(entries[0].Extra["payload"], &data); err != nil {
			return nil, fmt.Errorf("agentloop/temporal: spilled payload %s: %w", name, err)
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != name {
			return nil, errors.New("agentloop/temporal: spilled payload " + name + " does not match its checksum")
		}
		var orig commonpb.Payload
		if err := proto.Unmarshal(data, &orig); err != nil {
			return nil, fmt.Errorf("agentloop/temporal: spilled payload %s: %w", name, err)
		}
		out[i] = &orig
	}
	return out, nil
}
