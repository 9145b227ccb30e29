package tool

import "encoding/json"

// TakesFlatPath reports whether raw compiles on the flat path
// (compileFlat), leaving its general form to the first input that needs
// it.
func TakesFlatPath(raw json.RawMessage) bool {
	var generic any
	return json.Unmarshal(raw, &generic) == nil && compileFlat(raw, generic) != nil
}
