package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

// A tool.Host serves the file tools' text from somewhere other than the
// disk, here an editor's unsaved buffer held in memory. The file must
// still exist on disk: the tool checks it there first.
func ExampleRead_host() {
	dir, _ := os.MkdirTemp("", "host-example")
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	path := filepath.Join(dir, "main.go")
	_ = os.WriteFile(path, []byte("package main\n"), 0o644)

	buffers := map[string]string{path: "package main // not saved yet\n"}
	env := &tool.Env{Cwd: dir, State: &tool.State{}, Host: &tool.Host{
		ReadTextFile: func(_ context.Context, p string) ([]byte, error) { return []byte(buffers[p]), nil },
	}}
	in, _ := json.Marshal(map[string]string{"file_path": path})
	r, err := tools.Read().Run(context.Background(), &tool.Call{ID: "toolu_1", Input: in, Env: env})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.Text())
	// Output:
	// 1	package main // not saved yet
	// 2
}
