package conversation

import "fmt"

// optionsWiring turns an *agentloop.Options into a Config. The root sets it
// when it is initialised (its wiring.go), so that a host outside the root
// package, such as the temporal module, takes the same Options without the
// root exporting its wiring and without this package importing the root.
var optionsWiring func(any) (*Config, bool)

// SetOptionsWiring records the root's wiring; only the root calls it, from
// an init function.
func SetOptionsWiring(f func(any) (*Config, bool)) { optionsWiring = f }

// FromOptions is the Config of o, an *agentloop.Options (nil means
// defaults). It fails when o is of another type or the root package is not
// linked in.
func FromOptions(o any) (*Config, error) {
	if optionsWiring == nil {
		return nil, fmt.Errorf("%w: the agentloop package is not linked in", ErrInvalidOption)
	}
	c, ok := optionsWiring(o)
	if !ok {
		return nil, fmt.Errorf("%w: %T is not *agentloop.Options", ErrInvalidOption, o)
	}
	if c == nil {
		c = new(Config)
	}
	return c, nil
}
