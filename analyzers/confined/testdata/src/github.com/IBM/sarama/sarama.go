// Package sarama is a test stub of IBM/sarama's consumer group API.
package sarama

type ConsumerMessage struct {
	Partition int32
	Offset    int64
}

type ConsumerGroupSession interface {
	MarkMessage(msg *ConsumerMessage, metadata string)
}

type ConsumerGroupClaim interface {
	Messages() <-chan *ConsumerMessage
}

type ConsumerGroupHandler interface {
	Setup(ConsumerGroupSession) error
	Cleanup(ConsumerGroupSession) error
	ConsumeClaim(ConsumerGroupSession, ConsumerGroupClaim) error
}
