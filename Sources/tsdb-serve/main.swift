import TSDBServer

await ServeCommand.main(Array(CommandLine.arguments.dropFirst()))
