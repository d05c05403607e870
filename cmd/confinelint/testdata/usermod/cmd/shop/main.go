// Command shop runs the order consumer with its status endpoint until
// interrupted.
package main

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"time"

	"example.com/shop/consumer"
	"example.com/shop/pool"

	"golang.org/x/sync/errgroup"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	shared := pool.New(4)
	defer shared.Close()
	c, err := consumer.New([]string{"localhost:9092"}, "shop", 8, shared)
	if err != nil {
		log.Fatal(err)
	}
	srv := &http.Server{Addr: ":8080", Handler: c}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return c.Run(ctx) })
	g.Go(func() error {
		c.Refresh(ctx, time.Minute, func() map[string]int64 { return map[string]int64{} })
		return nil
	})
	g.Go(func() error {
		if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	})
	g.Go(func() error {
		<-ctx.Done()
		return srv.Shutdown(context.WithoutCancel(ctx))
	})
	if err := g.Wait(); err != nil && !errors.Is(err, context.Canceled) {
		log.Fatal(err)
	}
}
