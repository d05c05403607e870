// Project: influxdata/telegraf (plugins/inputs/statsd)
// Bug: Statsd.parseStatsdLine takes s.Lock() and, on a malformed line (a
//
//	value field with no "|type" part), returned the parse error from inside
//	the field loop without unlocking. The plugin's mutex is leaked; the next
//	Gather() interval blocks forever on s.Lock() and the agent hangs.
//
// Fix: `defer s.Unlock()` right after s.Lock() so every return path unlocks.
package main

import (
	"errors"
	"fmt"
	"log"
	"strconv"
	"strings"
	"sync"
	"time"
)

type Accumulator struct {
	metrics []string
}

func (a *Accumulator) AddGauge(name string, v float64) {
	a.metrics = append(a.metrics, fmt.Sprintf("%s gauge=%g", name, v))
}

func (a *Accumulator) AddCounter(name string, v int64) {
	a.metrics = append(a.metrics, fmt.Sprintf("%s counter=%di", name, v))
}

type Statsd struct {
	Protocol        string
	ServiceAddress  string
	MetricSeparator string
	DeleteGauges    bool
	DeleteCounters  bool

	sync.Mutex
	in   chan string
	done chan struct{}
	wg   sync.WaitGroup

	gauges   map[string]float64
	counters map[string]int64
}

func (s *Statsd) Start() {
	s.in = make(chan string, 16)
	s.done = make(chan struct{})
	s.gauges = map[string]float64{}
	s.counters = map[string]int64{}
	s.wg.Add(1)
	go s.parser()
}

// parser reads lines off the UDP/TCP listeners and parses them.
func (s *Statsd) parser() {
	defer s.wg.Done()
	for {
		select {
		case <-s.done:
			return
		case buf := <-s.in:
			for _, line := range strings.Split(buf, "\n") {
				line = strings.TrimSpace(line)
				if line == "" {
					continue
				}
				if err := s.parseStatsdLine(line); err != nil {
					log.Printf("E! [inputs.statsd] %v", err)
				}
			}
		}
	}
}

func (s *Statsd) parseStatsdLine(line string) error {
	s.Lock()
	defer s.Unlock()

	bits := strings.Split(line, ":")
	if len(bits) < 2 {
		return fmt.Errorf("splitting ':', unable to parse metric: %s", line)
	}
	name := strings.ReplaceAll(bits[0], ".", s.MetricSeparator)
	for _, bit := range bits[1:] {
		pipesplit := strings.Split(bit, "|")
		if len(pipesplit) < 2 {
			// FIX: the deferred Unlock releases the mutex here too
			return errors.New("error parsing statsd line: " + line)
		}
		switch pipesplit[1] {
		case "g":
			v, err := strconv.ParseFloat(pipesplit[0], 64)
			if err != nil {
				return fmt.Errorf("parsing value to float64: %w", err)
			}
			s.gauges[name] = v
		case "c":
			v, err := strconv.ParseInt(pipesplit[0], 10, 64)
			if err != nil {
				return fmt.Errorf("parsing value to int64: %w", err)
			}
			s.counters[name] += v
		}
	}
	return nil
}

func (s *Statsd) Gather(acc *Accumulator) error {
	s.Lock()
	defer s.Unlock()
	for name, v := range s.gauges {
		acc.AddGauge(name, v)
	}
	if s.DeleteGauges {
		s.gauges = map[string]float64{}
	}
	for name, v := range s.counters {
		acc.AddCounter(name, v)
	}
	if s.DeleteCounters {
		s.counters = map[string]int64{}
	}
	return nil
}

func (s *Statsd) Stop() {
	close(s.done)
	s.wg.Wait()
}

func main() {
	s := &Statsd{Protocol: "udp", ServiceAddress: ":8125", MetricSeparator: "_",
		DeleteGauges: true, DeleteCounters: true}
	s.Start()

	s.in <- "cpu.load:1.5|g\nrequests.count:3|c\n"
	s.in <- "requests.count:1|c\nbroken.metric:42\n" // missing "|type"
	time.Sleep(50 * time.Millisecond)

	// interval tick
	acc := &Accumulator{}
	if err := s.Gather(acc); err != nil {
		log.Fatal(err)
	}
	s.Stop()
	fmt.Println(strings.Join(acc.metrics, "\n"))
}
